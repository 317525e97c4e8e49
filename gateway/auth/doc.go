// Package auth verifies AWS Signature Version 4 signatures, for gateways configured
// with credentials (gateway.Config.Credentials). The gateway rebuilds the canonical request from what arrived,
// using the headers the client says it signed, and compares signatures, as SQS does.
// Requests may be signed in the Authorization header, as every SDK sends them, or in the
// query string (presigned URLs: X-Amz-Algorithm, -Credential, -Date, -Expires,
// -SignedHeaders, -Signature). A presigned request is valid from 15 minutes before its
// X-Amz-Date until X-Amz-Expires seconds after it, and never more than 15 minutes after
// it, which is as long as SQS honours one. Session tokens are not supported.
//
// It knows nothing of drivers or of the gateway's server.
package auth
