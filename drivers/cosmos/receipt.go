package cosmos

import "github.com/anysqs/anysqs/drivers/sqsrule"

// A receipt handle seals (sqsrule.SealHandle) version | incarnation | message id | claim
// token, each field behind its length. The token is fresh per receive and stored in the
// message, so a handle names one claim generation: a stale handle cannot delete or
// extend a newer claim. The incarnation ties it to one life of the queue. The MAC key is
// kept in the container, so every instance opens the handles of the others.
const handleVersion = 1

type receipt struct {
	inc, mid, tok string
}

func (d *Driver) encodeHandle(r receipt) string {
	b := []byte{handleVersion}
	for _, s := range []string{r.inc, r.mid, r.tok} {
		b = sqsrule.AppendField(b, s)
	}
	return sqsrule.SealHandle(d.secret, b)
}

// decodeHandle returns false for any handle this driver did not issue.
func (d *Driver) decodeHandle(h string) (receipt, bool) {
	b, ok := sqsrule.OpenHandle(d.secret, h)
	if !ok || len(b) < 1+3 || b[0] != handleVersion {
		return receipt{}, false
	}
	parts, rest, ok := sqsrule.ReadFields(b[1:], 3)
	if !ok || len(rest) != 0 {
		return receipt{}, false
	}
	return receipt{inc: parts[0], mid: parts[1], tok: parts[2]}, true
}
