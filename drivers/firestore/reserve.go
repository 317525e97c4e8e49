package firestore

import (
	"context"
	"sort"
	"sync"
)

// reservations are the documents this driver instance's transactions are about to
// write. Receivers in one process skip each other's candidates, and FIFO senders of one
// group queue up here, instead of meeting inside Firestore: there two transactions that
// read one document and then write it wait for each other until one is aborted (on a
// real database quickly, by wound-wait; on the emulator only after a lock timeout of
// about a second). Other instances are still met in Firestore, which keeps it correct.
type reservations struct {
	mu   sync.Mutex
	held map[string]chan struct{}
}

// try reserves those of keys no one holds, and returns them.
func (r *reservations) try(keys []string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[string]chan struct{}{}
	}
	var got []string
	for _, k := range keys {
		if _, busy := r.held[k]; !busy {
			r.held[k] = make(chan struct{})
			got = append(got, k)
		}
	}
	return got
}

// wait reserves every key, in sorted order, waiting for holders to release them.
func (r *reservations) wait(ctx context.Context, keys []string) ([]string, error) {
	keys = append([]string(nil), keys...)
	sort.Strings(keys)
	var got []string
	for i, k := range keys {
		if i > 0 && keys[i-1] == k {
			continue
		}
		for {
			r.mu.Lock()
			if r.held == nil {
				r.held = map[string]chan struct{}{}
			}
			ch, busy := r.held[k]
			if !busy {
				r.held[k] = make(chan struct{})
				r.mu.Unlock()
				got = append(got, k)
				break
			}
			r.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				r.release(got)
				return nil, ctx.Err()
			}
		}
	}
	return got, nil
}

func (r *reservations) release(keys []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range keys {
		if ch, ok := r.held[k]; ok {
			close(ch)
			delete(r.held, k)
		}
	}
}
