package firestore

import (
	"context"
	"strings"
)

// CountChunks counts the chunk documents of every queue's storage under the options'
// prefix (collection group "chunks"), for tests.
func CountChunks(ctx context.Context, o Options) (int, error) {
	d, err := Open(ctx, o)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	snaps, err := d.client.CollectionGroup("chunks").Documents(ctx).GetAll()
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range snaps {
		if strings.Contains(s.Ref.Path, "/"+d.prefix+"_store/") {
			n++
		}
	}
	return n, nil
}
