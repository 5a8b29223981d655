package engine

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"sort"
	"sync"

	"github.com/parsecdb/parsec/internal/storage"
)

// ridEncoding is Cosmos's resource-id alphabet: standard base64 with '/'
// replaced by '-', so that rids can stand in URL paths (`_self`).
var ridEncoding = base64.NewEncoding("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+-")

func encodeRid(b []byte) string { return ridEncoding.EncodeToString(b) }

func decodeRid(s string) ([]byte, error) { return ridEncoding.DecodeString(s) }

// allocator hands out increasing sequence numbers that are never reused, even
// across crashes: it persists a high-water mark a block ahead of what it hands
// out, so only one in allocBlock allocations touches storage.
type allocator struct {
	mu    sync.Mutex
	store *storage.DB
	key   []byte
	next  uint64
	limit uint64
	// With track (set by Open): fence is the catalog log's index
	// whose entries' positions next reflects (advance), and fences the
	// fence of the latest numbers handed out, in order (see fenceOf).
	track  bool
	fence  uint64
	fences []seqFence
}

type seqFence struct{ seq, fence uint64 }

// maxFences bounds the allocator's memory of fences: a catalog change
// made of an older number counts as made with no knowledge of the catalog
// (fence 0), which can only get it refused and retried.
const maxFences = 4096

const allocBlock = 4096

func newAllocator(store *storage.DB, key []byte) (*allocator, error) {
	a := &allocator{store: store, key: key, next: 1, limit: 1}
	v, err := store.Get(nil, key)
	switch {
	case err == storage.ErrNotFound:
	case err != nil:
		return nil, fmt.Errorf("cannot read allocator: %w", err)
	case len(v) == 8:
		a.next = binary.BigEndian.Uint64(v)
		a.limit = a.next
	default:
		return nil, corrupt("the id allocator record %x holds %d bytes, not 8", key, len(v))
	}
	return a, nil
}

// next returns n consecutive fresh sequence numbers, starting at the result.
func (a *allocator) take(n uint64) (uint64, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next+n > a.limit {
		limit := a.next + n + allocBlock
		if err := a.store.Set(a.key, binary.BigEndian.AppendUint64(nil, limit)); err != nil {
			return 0, fmt.Errorf("%w: cannot persist id allocator: %v", ErrUnavailable, err)
		}
		a.limit = limit
	}
	s := a.next
	a.next += n
	if a.track {
		if len(a.fences) >= maxFences {
			a.fences = append(a.fences[:0], a.fences[len(a.fences)/2:]...)
		}
		a.fences = append(a.fences, seqFence{s, a.fence})
	}
	return s, nil
}

// fenceOf returns the catalog index the allocator reflected when it handed
// out seq: 0 if it no longer remembers.
func (a *allocator) fenceOf(seq uint64) uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	i := sort.Search(len(a.fences), func(i int) bool { return a.fences[i].seq >= seq })
	if i < len(a.fences) && a.fences[i].seq == seq {
		return a.fences[i].fence
	}
	return 0
}

// position returns the next number take would hand out.
func (a *allocator) position() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.next
}

// advance makes the allocator hand out no number below pos, persisting the
// high-water mark as take does: a node applying another's catalog entry
// moves past the numbers that node used. fence is that entry's index.
func (a *allocator) advance(pos, fence uint64) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.fence = max(a.fence, fence)
	if pos <= a.next {
		return nil
	}
	if pos > a.limit {
		limit := pos + allocBlock
		if err := a.store.Set(a.key, binary.BigEndian.AppendUint64(nil, limit)); err != nil {
			return fmt.Errorf("%w: cannot persist id allocator: %v", ErrUnavailable, err)
		}
		a.limit = limit
	}
	a.next = pos
	return nil
}

// etagOf renders the etag of the resource version written with sequence
// number seq, in Cosmos's quoted form. Sequence numbers never repeat: those
// of databases, containers and offers come from the store's allocator,
// those of items from their partition (partState.takeSeqs), with bit 63 set.
func etagOf(seq uint64) string {
	return fmt.Sprintf("\"%08x-0000-0000-%04x-%012x\"", uint32(seq>>48), uint16(seq>>32), seq&0xffffffff)
}

// seqOfEtag is the sequence number an etag was rendered from (etagOf's
// inverse); ok is false for anything etagOf does not produce.
func seqOfEtag(etag []byte) (seq uint64, ok bool) {
	// "hhhhhhhh-0000-0000-hhhh-hhhhhhhhhhhh": the top 16 bits printed in 8
	// digits, the next 16 in 4, the low 32 in 12.
	if len(etag) != 38 || etag[0] != '"' || etag[37] != '"' || string(etag[9:20]) != "-0000-0000-" || etag[24] != '-' {
		return 0, false
	}
	top, ok1 := parseHex(etag[1:9])
	mid, ok2 := parseHex(etag[20:24])
	low, ok3 := parseHex(etag[25:37])
	if !ok1 || !ok2 || !ok3 || top > 0xffff || low > 0xffffffff {
		return 0, false
	}
	return top<<48 | mid<<32 | low, true
}

// parseHex parses lowercase hex digits (at most 16).
func parseHex(b []byte) (uint64, bool) {
	var v uint64
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint64(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | uint64(c-'a'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

// EncodeRid renders resource-id bytes in Cosmos's alphabet.
func EncodeRid(b []byte) string { return encodeRid(b) }

// DecodeRid parses a resource id.
func DecodeRid(s string) ([]byte, error) { return decodeRid(s) }
