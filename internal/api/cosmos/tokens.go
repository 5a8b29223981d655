package cosmos

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/query/exec"
)

// This file holds the tokens the engine's typed positions travel in:
// session tokens and the continuation tokens of read feeds and queries.
// Clients keep continuation tokens across requests and server restarts, so
// their formats are stable: a change must keep decoding the tokens already
// handed out.

// sessionToken renders a session as Cosmos's session token,
// "<range id>:-1#<lsn>"; the zero session renders as "" (the response then
// carries a neutral token).
func sessionToken(s engine.Session) string {
	if s.RangeID == "" {
		return ""
	}
	var b [48]byte
	t := append(append(b[:0], s.RangeID...), ":-1#"...)
	return string(strconv.AppendUint(t, s.LSN, 10))
}

// sessionTokens renders the sessions of the partitions a page read, as one
// comma-separated session token.
func sessionTokens(ss []engine.Session) string {
	switch len(ss) {
	case 0:
		return ""
	case 1:
		return sessionToken(ss[0])
	}
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = sessionToken(s)
	}
	return strings.Join(parts, ",")
}

// errBadContinuation is the 400 of a continuation token the server cannot
// use: the service's message, which clients match on, and what was wrong.
func errBadContinuation(format string, args ...any) error {
	return errBadRequest("%s (%s)", engine.MsgBadContinuation, fmt.Sprintf(format, args...))
}

// feedToken is the content of a read-feed continuation token. The token is
// the unpadded base64url encoding of its JSON:
//
//	base64url({"rid":"<container rid>","range":"<range id, omitted when empty>","after":"<hex of engine.Feed.Next>"})
type feedToken struct {
	Rid   string `json:"rid"`
	Range string `json:"range,omitempty"`
	After string `json:"after"` // hex of the last returned item key, after the container prefix
}

// encodeFeedToken returns the continuation token of a read feed of the
// container rid (of one range when rangeID is set) that resumes after the
// position next.
func encodeFeedToken(rid, rangeID string, next []byte) string {
	t, _ := json.Marshal(feedToken{Rid: rid, Range: rangeID, After: hex.EncodeToString(next)})
	return base64.RawURLEncoding.EncodeToString(t)
}

// decodeFeedToken returns the position a read-feed continuation token
// resumes after; it must belong to the container rid and the range rangeID
// ("" for the whole container).
func decodeFeedToken(token, rid, rangeID string) ([]byte, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	var t feedToken
	if err == nil {
		err = json.Unmarshal(raw, &t)
	}
	var after []byte
	if err == nil {
		after, err = hex.DecodeString(t.After)
	}
	if err != nil {
		return nil, errBadContinuation("it is not a token this server gave")
	}
	if t.Rid != rid || t.Range != rangeID {
		return nil, errBadContinuation("it belongs to another container or partition key range")
	}
	return after, nil
}

// queryToken is the content of a query continuation token. The token is the
// unpadded base64url encoding of its JSON, in which the binary query state
// (exec.State.MarshalBinary) is itself standard base64, as encoding/json
// writes a []byte:
//
//	base64url({"rid":"<container rid>","range":"<range id, omitted when empty>","state":"<base64 of the state>"})
type queryToken struct {
	Rid   string `json:"rid"`
	Range string `json:"range,omitempty"`
	State []byte `json:"state"`
}

// encodeQueryToken returns the continuation token of a query over the
// container rid (of one range when rangeID is set) that resumes at state.
func encodeQueryToken(rid, rangeID string, state *exec.State) (string, error) {
	b, err := state.MarshalBinary()
	if err != nil {
		// Not a panic: a query page runs on the request's goroutine.
		return "", fmt.Errorf("%w: cannot encode query state: %v", engine.ErrInternal, err)
	}
	t, _ := json.Marshal(queryToken{Rid: rid, Range: rangeID, State: b})
	return base64.RawURLEncoding.EncodeToString(t), nil
}

// decodeQueryToken returns the query state a continuation token resumes; it
// must belong to the container rid, the range rangeID ("" for the whole
// container) and plan.
func decodeQueryToken(token, rid, rangeID string, plan *exec.Plan) (*exec.State, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	var t queryToken
	if err == nil {
		err = json.Unmarshal(raw, &t)
	}
	if err != nil {
		return nil, errBadContinuation("it is not a token this server gave")
	}
	if t.Rid != rid || t.Range != rangeID {
		return nil, errBadContinuation("it belongs to another container or partition key range")
	}
	state, err := plan.UnmarshalState(t.State)
	if err != nil {
		return nil, errBadContinuation("it does not belong to this query: %v", err)
	}
	return state, nil
}
