package cosmos

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
)

// Sweep deletes, up to req.Limit items, expired and purged messages of every queue,
// expired deduplication markers and receive attempts, and the items of deleted queue
// incarnations. Cosmos TTL reclaims what a sweep never reaches.
func (d *Driver) Sweep(ctx context.Context, req drivers.SweepRequest) (drivers.SweepResult, error) {
	limit := req.Limit
	if limit <= 0 {
		limit = 1000
	}
	items, err := d.query(ctx, "Sweep", catalogPK, "SELECT * FROM c WHERE c.kind = 'queue' OR c.kind = 'dead'", nil, 0)
	if err != nil {
		return drivers.SweepResult{}, err
	}
	var res drivers.SweepResult
	live := map[string]string{} // name -> live incarnation
	var queues []queueDoc
	var dead []deadDoc
	for _, it := range items {
		var k struct {
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(it, &k); err != nil {
			return res, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode catalog item")
		}
		if k.Kind == "dead" {
			var dd deadDoc
			if err := json.Unmarshal(it, &dd); err != nil {
				return res, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode catalog item")
			}
			dead = append(dead, dd)
			continue
		}
		var q queueDoc
		if err := json.Unmarshal(it, &q); err != nil {
			return res, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode catalog item")
		}
		if q.Deleted == 0 {
			live[q.Name] = q.Inc
			queues = append(queues, q)
		}
	}
	// sweepQuery deletes what q selects (id only) in pk, within the remaining budget.
	sweepQuery := func(pk, q string, params []azcosmos.QueryParameter) (int, error) {
		if res.Deleted >= limit {
			res.More = true
			return 0, nil
		}
		budget := limit - res.Deleted
		ids, err := d.query(ctx, "Sweep", pk, q, params, budget+1)
		if err != nil {
			return 0, err
		}
		if len(ids) > budget {
			res.More, ids = true, ids[:budget]
		}
		for _, it := range ids {
			var v struct {
				ID string `json:"id"`
			}
			if err := json.Unmarshal(it, &v); err != nil {
				return 0, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode id")
			}
			if err := d.remove(ctx, "Sweep", pk, v.ID, ""); err != nil && statusOf(err) != http.StatusNotFound {
				return 0, mapErr(ctx, err, "sweep")
			}
			res.Deleted++
		}
		return len(ids), nil
	}
	for _, q := range queues {
		p := liveParams(q, req.Now)
		if _, err := sweepQuery(q.pk(), "SELECT c.id FROM c WHERE c.kind = 'msg' AND (c.enq <= @cutoff OR c.gen < @gen)", p); err != nil {
			return res, err
		}
		if _, err := sweepQuery(q.pk(), "SELECT c.id FROM c WHERE (c.kind = 'dedup' OR c.kind = 'attempt') AND c.exp <= @now", p); err != nil {
			return res, err
		}
	}
	for _, dd := range dead {
		if live[dd.Name] == dd.Inc {
			continue // DeleteQueue stopped between its two writes: the queue lives
		}
		n, err := sweepQuery(queuePK(dd.Name, dd.Inc), "SELECT c.id FROM c", nil)
		if err != nil {
			return res, err
		}
		if n == 0 && !res.More {
			if err := d.remove(ctx, "Sweep", catalogPK, dd.ID, ""); err != nil && statusOf(err) != http.StatusNotFound {
				return res, mapErr(ctx, err, "sweep")
			}
		}
	}
	return res, nil
}
