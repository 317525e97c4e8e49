package main

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/declare"
)

// declareQueues brings the configuration's declared queues into line through the
// gateway gw itself, so they pass the checks and capability policy a client's calls do,
// and logs each change.
func declareQueues(ctx context.Context, gw http.Handler, cfg config.Config, log *slog.Logger) error {
	if len(cfg.Queues) == 0 {
		return nil
	}
	var keys map[string]declare.Key // nil: the gateway does not verify signatures
	if creds := cfg.Auth.Credentials; len(creds) > 0 {
		keys = map[string]declare.Key{}
		for _, c := range creds {
			account := c.AccountID
			if account == cfg.AccountID {
				account = ""
			}
			if _, ok := keys[account]; !ok {
				keys[account] = declare.Key{ID: c.AccessKeyID, Secret: c.SecretAccessKey}
			}
		}
	}
	targets := declare.InProcess(gw, cfg.Region, keys)
	plan, err := declare.Plan(ctx, targets, cfg.Queues)
	if err != nil {
		return err
	}
	err = declare.Apply(ctx, targets, plan, func(c declare.Change) {
		switch c.Op {
		case declare.Create:
			log.Info("declared queue created", "queue", c.Label(), "attributes", len(c.Attributes), "tags", len(c.Tags))
		case declare.Update:
			for _, d := range c.Attributes {
				log.Info("declared queue attribute changed", "queue", c.Label(), "attribute", d.Name, "from", d.From, "to", d.To)
			}
			for _, d := range c.Tags {
				log.Info("declared queue tag changed", "queue", c.Label(), "tag", d.Name, "from", d.From, "to", d.To)
			}
		}
		if len(c.Degraded) > 0 {
			log.Warn("declared queue degraded", "queue", c.Label(), "capabilities", strings.Join(c.Degraded, ","))
		}
	})
	if err != nil {
		return err
	}
	create, update, unchanged, _ := declare.Counts(plan)
	log.Info("declared queues", "created", create, "updated", update, "unchanged", unchanged)
	return nil
}
