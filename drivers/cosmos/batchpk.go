package cosmos

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/streaming"
)

// batchPartitionKeys is the pipeline policy of the batch_partition_keys option. Cosmos
// DB takes a transactional batch's partition key from the x-ms-documentdb-partitionkey
// header, and azcosmos sends it there only; @vercel/cosmosdb-server reads it from each
// operation's partitionKey field instead, and answers 500 for a Replace, Upsert, Read or
// Delete without one (a FIFO send's head and deduplication marker). The policy copies
// the header into every operation that has none; other requests pass unchanged.
type batchPartitionKeys struct{}

func (batchPartitionKeys) Do(req *policy.Request) (*http.Response, error) {
	r := req.Raw()
	pk := r.Header.Get("x-ms-documentdb-partitionkey")
	if r.Header.Get("x-ms-cosmos-is-batch-request") != "True" || pk == "" || req.Body() == nil {
		return req.Next()
	}
	body, err := io.ReadAll(req.Body())
	if err != nil {
		return nil, err
	}
	if err := req.RewindBody(); err != nil {
		return nil, err
	}
	var ops []map[string]json.RawMessage
	if json.Unmarshal(body, &ops) != nil {
		return req.Next() // not a batch body this policy knows: send it as it is
	}
	for _, op := range ops {
		if _, ok := op["partitionKey"]; !ok {
			// The field holds the header's JSON array as a string, as the SDKs that
			// write it do.
			op["partitionKey"] = mustJSON(pk)
		}
	}
	if err := req.SetBody(streaming.NopCloser(bytes.NewReader(mustJSON(ops))), r.Header.Get("Content-Type")); err != nil {
		return nil, err
	}
	return req.Next()
}
