package postgres

import "testing"

// TestOldestDriverTable: every migration says which drivers still work after it, and no
// migration lets in a driver that an earlier one shut out.
func TestOldestDriverTable(t *testing.T) {
	if len(oldestDriver) != len(migrations) {
		t.Fatalf("%d oldestDriver entries for %d migrations", len(oldestDriver), len(migrations))
	}
	for i, v := range oldestDriver {
		if v < 1 || v > i+1 || (i > 0 && v < oldestDriver[i-1]) {
			t.Fatalf("oldestDriver[%d] = %d: must be between the previous entry and %d", i, v, i+1)
		}
	}
}
