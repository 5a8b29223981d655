// Package activityid makes x-ms-activity-id values: random (version 4)
// UUIDs in the 8-4-4-4-12 form the Cosmos DB SDKs and service send. The
// server tags its responses with one; the load generator its requests.
package activityid

import (
	"crypto/rand"
	"encoding/hex"
)

// New returns a random UUID.
func New() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
