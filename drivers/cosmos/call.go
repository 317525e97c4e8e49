package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
)

// statusOf returns the HTTP status of a Cosmos error, or of the failed operation of a
// batch, 0 if it carries none.
func statusOf(err error) int {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	var be *batchError
	if errors.As(err, &be) {
		return be.status
	}
	return 0
}

// substatus is the x-ms-substatus of a Cosmos error ("" for none or 0), which tells
// apart refusals of one status: a full partition (403, 1014) from a missing permission
// (403, 5300), say. The SDK's error text leaves the response headers out.
func substatus(err error) string {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		return ""
	}
	if v := re.RawResponse.Header.Get("x-ms-substatus"); v != "0" {
		return v
	}
	return ""
}

// batchError is a transactional batch that Cosmos applied none of, because one of its
// operations failed: that operation's status (the others answer 424), with what Cosmos
// said about it. The batch's own request succeeded, so there is no SDK error to keep.
type batchError struct {
	op       int    // index of the failed operation in the batch
	status   int    // its status; 0 when Cosmos named no operation
	body     string // its response body, if any
	activity string // the batch's x-ms-activity-id, which Azure support asks for
}

func (e *batchError) Error() string {
	var b strings.Builder
	if e.status == 0 {
		b.WriteString("transactional batch not applied; no operation says why")
	} else {
		fmt.Fprintf(&b, "transactional batch not applied: operation %d answered %d %s", e.op, e.status, http.StatusText(e.status))
	}
	if e.body != "" {
		b.WriteString(": " + e.body)
	}
	if e.activity != "" {
		b.WriteString(" (activity id " + e.activity + ")")
	}
	return b.String()
}

// retryAfter is the wait a 429 asked for (x-ms-retry-after-ms), zero if none.
func retryAfter(err error) time.Duration {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		return 0
	}
	if v, err := strconv.ParseFloat(re.RawResponse.Header.Get("x-ms-retry-after-ms"), 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Millisecond))
	}
	if v, err := strconv.Atoi(re.RawResponse.Header.Get("Retry-After")); err == nil && v > 0 {
		return time.Duration(v) * time.Second
	}
	return 0
}

// chargeOf reads the RU charge of a failed request, which Cosmos bills too.
func chargeOf(err error) float64 {
	var re *azcore.ResponseError
	if !errors.As(err, &re) || re.RawResponse == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(re.RawResponse.Header.Get("x-ms-request-charge"), 64)
	return v
}

// mapErr turns a Cosmos error into a driver error. Context errors pass through.
func mapErr(ctx context.Context, err error, what string) error {
	if err == nil {
		return nil
	}
	var de *drivers.Error
	if errors.As(err, &de) {
		return err
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ctx.Err()
	}
	e := &drivers.Error{Kind: drivers.KindInternal, Message: "cosmos: " + what, Err: err}
	switch s := statusOf(err); {
	case s == http.StatusTooManyRequests:
		e.Kind, e.Message, e.RetryAfter = drivers.KindThrottled, e.Message+": request rate too large (429)", retryAfter(err)
	case s == http.StatusPreconditionFailed || s == http.StatusConflict:
		e.Kind, e.Message = drivers.KindAborted, e.Message+": concurrent change"
	case s == http.StatusRequestEntityTooLarge:
		e.Kind, e.Message = drivers.KindOverLimit, e.Message+": item or partition too large"
	case s == http.StatusForbidden:
		e.Kind, e.Message = drivers.KindOverLimit, e.Message+": refused (partition full, or no permission)"
	case s == http.StatusUnauthorized:
		e.Message += ": not authorised"
	case s == http.StatusBadRequest:
		e.Message += ": bad request"
	case s == 0 || s >= 500 || s == http.StatusRequestTimeout || s == http.StatusGone:
		e.Kind = drivers.KindUnavailable
	}
	if sub := substatus(err); sub != "" {
		e.Message += " (substatus " + sub + ")"
	}
	return e
}

// call runs one Cosmos request under the driver's request timeout, retrying 429s after
// the wait the service asked for while the deadline allows (a 429 applied nothing), and
// adds the request's RU charge to op's series. charge extracts it from the response.
func (d *Driver) call(ctx context.Context, op string, f func(ctx context.Context) (float32, error)) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	for {
		ru, err := f(ctx)
		if err == nil {
			d.metrics.add(op, float64(ru), false)
			return nil
		}
		d.metrics.add(op, chargeOf(err), statusOf(err) == http.StatusTooManyRequests)
		if statusOf(err) != http.StatusTooManyRequests {
			return err
		}
		wait := retryAfter(err)
		if wait <= 0 {
			wait = 100 * time.Millisecond
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return err // the caller gets KindThrottled with RetryAfter
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// read point-reads id in pk into v. found is false for a missing item. Some emulators
// answer a missing item with 500; a 500 whose body names no item is not taken as
// missing, so only a real 404 counts.
func (d *Driver) read(ctx context.Context, op, pk, id string, v any) (azcore.ETag, bool, error) {
	var resp azcosmos.ItemResponse
	err := d.call(ctx, op, func(ctx context.Context) (float32, error) {
		var err error
		resp, err = d.c.ReadItem(ctx, azcosmos.NewPartitionKeyString(pk), id, nil)
		return resp.RequestCharge, err
	})
	if statusOf(err) == http.StatusNotFound {
		return "", false, nil
	}
	if err != nil {
		return "", false, mapErr(ctx, err, op+": read "+id)
	}
	if err := json.Unmarshal(resp.Value, v); err != nil {
		return "", false, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode "+id)
	}
	return resp.ETag, true, nil
}

// readOrMissing is read for items that may legitimately be absent, on a backend that
// answers 500 for a missing item (an emulator): a point query answers an empty result
// instead, at the price of a query.
func (d *Driver) readOrMissing(ctx context.Context, op, pk, id string, v any) (azcore.ETag, bool, error) {
	items, err := d.query(ctx, op, pk, "SELECT * FROM c WHERE c.id = @id", []azcosmos.QueryParameter{{Name: "@id", Value: id}}, 1)
	if err != nil {
		return "", false, err
	}
	if len(items) == 0 {
		return "", false, nil
	}
	var meta struct {
		ETag string `json:"_etag"`
	}
	if err := json.Unmarshal(items[0], &meta); err != nil {
		return "", false, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode "+id)
	}
	if err := json.Unmarshal(items[0], v); err != nil {
		return "", false, drivers.Wrap(drivers.KindInternal, err, "cosmos: decode "+id)
	}
	return azcore.ETag(meta.ETag), true, nil
}

func (d *Driver) create(ctx context.Context, op, pk string, v any) (azcore.ETag, error) {
	var resp azcosmos.ItemResponse
	body := mustJSON(v)
	err := d.call(ctx, op, func(ctx context.Context) (float32, error) {
		var err error
		resp, err = d.c.CreateItem(ctx, azcosmos.NewPartitionKeyString(pk), body, nil)
		return resp.RequestCharge, err
	})
	return resp.ETag, err
}

func (d *Driver) upsert(ctx context.Context, op, pk string, v any) error {
	body := mustJSON(v)
	return d.call(ctx, op, func(ctx context.Context) (float32, error) {
		resp, err := d.c.UpsertItem(ctx, azcosmos.NewPartitionKeyString(pk), body, nil)
		return resp.RequestCharge, err
	})
}

// replace writes v over id if its ETag is still etag; a 412 says someone else changed it.
func (d *Driver) replace(ctx context.Context, op, pk, id string, etag azcore.ETag, v any) (azcore.ETag, error) {
	var resp azcosmos.ItemResponse
	body := mustJSON(v)
	err := d.call(ctx, op, func(ctx context.Context) (float32, error) {
		var err error
		resp, err = d.c.ReplaceItem(ctx, azcosmos.NewPartitionKeyString(pk), id, body, &azcosmos.ItemOptions{IfMatchEtag: &etag})
		return resp.RequestCharge, err
	})
	return resp.ETag, err
}

// remove deletes id, conditionally on etag unless it is empty.
func (d *Driver) remove(ctx context.Context, op, pk, id string, etag azcore.ETag) error {
	var o *azcosmos.ItemOptions
	if etag != "" {
		o = &azcosmos.ItemOptions{IfMatchEtag: &etag}
	}
	return d.call(ctx, op, func(ctx context.Context) (float32, error) {
		resp, err := d.c.DeleteItem(ctx, azcosmos.NewPartitionKeyString(pk), id, o)
		return resp.RequestCharge, err
	})
}

// query runs a single-partition query and returns at most max items (0: all).
func (d *Driver) query(ctx context.Context, op, pk, q string, params []azcosmos.QueryParameter, max int) ([][]byte, error) {
	// The partition is also a filter: some emulators run every query across partitions.
	if i := strings.Index(q, " WHERE "); i >= 0 {
		q = q[:i] + " WHERE c.pk = @pk AND (" + q[i+len(" WHERE "):]
		if j := strings.Index(q, " ORDER BY "); j >= 0 {
			q = q[:j] + ")" + q[j:]
		} else {
			q += ")"
		}
	} else if j := strings.Index(q, " ORDER BY "); j >= 0 {
		q = q[:j] + " WHERE c.pk = @pk" + q[j:]
	} else {
		q += " WHERE c.pk = @pk"
	}
	params = append(append([]azcosmos.QueryParameter(nil), params...), azcosmos.QueryParameter{Name: "@pk", Value: pk})
	o := &azcosmos.QueryOptions{QueryParameters: params}
	if max > 0 {
		o.PageSizeHint = int32(max)
	}
	pager := d.c.NewQueryItemsPager(q, azcosmos.NewPartitionKeyString(pk), o)
	var out [][]byte
	for pager.More() && (max == 0 || len(out) < max) {
		var page azcosmos.QueryItemsResponse
		err := d.call(ctx, op, func(ctx context.Context) (float32, error) {
			var err error
			page, err = pager.NextPage(ctx)
			return page.RequestCharge, err
		})
		if err != nil {
			return nil, mapErr(ctx, err, op+": query")
		}
		out = append(out, page.Items...)
	}
	if max > 0 && len(out) > max {
		out = out[:max]
	}
	return out, nil
}

// maxBatchBody bounds the response body of a failed batch operation kept in its error.
const maxBatchBody = 512

// batch runs a transactional batch in one logical partition. failed is non-nil when an
// operation failed and none was applied: the first failure, as Cosmos answered it.
func (d *Driver) batch(ctx context.Context, op string, b azcosmos.TransactionalBatch) (failed *batchError, err error) {
	var resp azcosmos.TransactionalBatchResponse
	err = d.call(ctx, op, func(ctx context.Context) (float32, error) {
		var err error
		resp, err = d.c.ExecuteTransactionalBatch(ctx, b, nil)
		return resp.RequestCharge, err
	})
	if err != nil {
		return nil, err
	}
	// Cosmos answers a failed batch with 207 (Success false). Every operation's own
	// status is checked too: an emulator may answer 200 for a batch that failed.
	for i, r := range resp.OperationResults {
		if r.StatusCode != http.StatusFailedDependency && r.StatusCode >= 300 {
			body := string(r.ResourceBody)
			if len(body) > maxBatchBody {
				body = body[:maxBatchBody] + "..."
			}
			return &batchError{op: i, status: int(r.StatusCode), body: body, activity: resp.ActivityID}, nil
		}
	}
	if !resp.Success {
		return &batchError{activity: resp.ActivityID}, nil
	}
	return nil, nil
}
