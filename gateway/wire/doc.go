// Package wire holds the gateway's codecs for the SQS wire protocols: the check that a
// JSON 1.0 body is plain JSON text (no repeated members, no lone surrogates) before it
// is decoded, the Query protocol's form turned into the same request's JSON body, and
// the Query protocol's responses in XML or in its legacy JSON form.
//
// It knows nothing of drivers or of the gateway's server: it works on values and
// reflection alone.
package wire
