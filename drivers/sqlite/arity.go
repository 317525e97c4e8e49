package sqlite

import "github.com/anysqs/anysqs/drivers/sqsrule"

// byArity is a statement whose text depends on how many rows it names: built once for
// 1 to sqsrule.MaxBatchEntries rows, the sizes SQS batches have, and on demand beyond.
type byArity struct {
	build func(n int) string
	texts [sqsrule.MaxBatchEntries]string
}

func newByArity(build func(n int) string) *byArity {
	a := &byArity{build: build}
	for i := range a.texts {
		a.texts[i] = build(i + 1)
	}
	return a
}

// text returns the statement for n rows (n >= 1).
func (a *byArity) text(n int) string {
	if n <= len(a.texts) {
		return a.texts[n-1]
	}
	return a.build(n)
}
