package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/parsecdb/parsec/internal/binfmt"
	"github.com/parsecdb/parsec/internal/storage"
)

func createCmd(t *testing.T, c *Container, id, cmdID string, ts int64) *Command {
	t.Helper()
	op, err := c.PrepareWrite(OpCreate, []byte(fmt.Sprintf(`{"id":%q,"pk":"p"}`, id)), key("p"), true)
	if err != nil {
		t.Fatal(err)
	}
	return &Command{Ops: []Op{op}, ID: cmdID, Ts: ts}
}

// TestOutcomeTableAnswersRetry checks that a command applied again under
// its id gets its first outcome and writes nothing: a retried create is
// acknowledged as created with the first attempt's etag, not answered 409,
// and the partition's LSN does not move; a command of another id is
// applied as usual; and the record survives a restart.
func TestOutcomeTableAnswersRetry(t *testing.T) {
	dir := t.TempDir()
	e, st := testEngine(t, dir)
	c := mustContainer(t, e, 400)
	res, s1, err := c.Execute(createCmd(t, c, "a", "n1-1", 0), "")
	if err != nil || !res[0].Created {
		t.Fatalf("first: %v %+v", err, res)
	}
	again, s2, err := c.Execute(createCmd(t, c, "a", "n1-1", 0), "")
	if err != nil || !again[0].Created || again[0].Etag != res[0].Etag || string(again[0].Doc) != string(res[0].Doc) {
		t.Fatalf("retry: %v %+v; want the first outcome %+v", err, again, res)
	}
	if s2.LSN != s1.LSN {
		t.Fatalf("retry moved the LSN from %d to %d", s1.LSN, s2.LSN)
	}
	other, _, err := c.Execute(createCmd(t, c, "a", "n1-2", 0), "")
	if err != nil || !errors.Is(other[0].Err, ErrConflict) {
		t.Fatalf("another command: %v %+v; want 409", err, other)
	}
	// A recorded failure is the outcome too.
	if again, _, err := c.Execute(createCmd(t, c, "a", "n1-2", 0), ""); err != nil || !errors.Is(again[0].Err, ErrConflict) || again[0].Err.Error() != other[0].Err.Error() {
		t.Fatalf("retried conflict: %v %+v", err, again)
	}
	e.Close()
	st.Close()
	e, st = testEngine(t, dir)
	defer st.Close()
	defer e.Close()
	c, _ = e.Container("db", "c")
	again, _, err = c.Execute(createCmd(t, c, "a", "n1-1", 0), "")
	if err != nil || !again[0].Created || again[0].Etag != res[0].Etag {
		t.Fatalf("retry after a restart: %v %+v", err, again)
	}
}

// TestOutcomeTableEviction checks the eviction rule: records older than
// MaxOutcomeAge (by the commands' timestamps) go, a few per recorded
// command, oldest first, and the count in the partition state follows.
func TestOutcomeTableEviction(t *testing.T) {
	e, st := testEngine(t, "")
	defer st.Close()
	defer e.Close()
	c := mustContainer(t, e, 400)
	const base = 1_800_000_000
	for i := range 6 {
		if _, _, err := c.Execute(createCmd(t, c, fmt.Sprint("old", i), fmt.Sprint("old", i), base), ""); err != nil {
			t.Fatal(err)
		}
	}
	p := c.PartitionFor(c.Partitions()[0].Range().Min)
	count := func() (records, ages int, state uint64) {
		oLo, oHi, tLo, tHi := storage.PartitionOutcomeSpans(c.rid, p.info.ID)
		_ = st.Iterate(oLo, oHi, func(_, _ []byte) (bool, error) { records++; return true, nil })
		_ = st.Iterate(tLo, tHi, func(_, _ []byte) (bool, error) { ages++; return true, nil })
		return records, ages, p.state.Outcomes
	}
	if r, a, s := count(); r != 6 || a != 6 || s != 6 {
		t.Fatalf("after 6: %d records, %d age entries, state %d", r, a, s)
	}
	// A command past the age evicts evictPerRecord of the old ones.
	if _, _, err := c.Execute(createCmd(t, c, "new1", "new1", base+MaxOutcomeAge+1), ""); err != nil {
		t.Fatal(err)
	}
	if r, a, s := count(); r != 6-evictPerRecord+1 || a != r || s != uint64(r) {
		t.Fatalf("after one late command: %d records, %d age entries, state %d", r, a, s)
	}
	// An evicted id is applied again: it is a new command.
	res, _, err := c.Execute(createCmd(t, c, "old0", "old0", base+MaxOutcomeAge+1), "")
	if err != nil || !errors.Is(res[0].Err, ErrConflict) {
		t.Fatalf("evicted id: %v %+v; want it applied (409)", err, res)
	}
	// A young one is answered from the table.
	res, _, err = c.Execute(createCmd(t, c, "new1", "new1", base+MaxOutcomeAge+1), "")
	if err != nil || res[0].Err != nil || !res[0].Created {
		t.Fatalf("kept id: %v %+v; want its recorded creation", err, res)
	}
}

// TestCommandIDEncoding checks that an id travels in the encoding, and
// that a command without one encodes as before ids (version 4).
func TestCommandIDEncoding(t *testing.T) {
	cmd := &Command{Ops: []Op{{Kind: OpCreate, ID: "a", Key: key("p"), EPK: "00", Body: []byte(`{}`)}}, ID: "n2-17", Ts: 5}
	b := EncodeCommand(nil, cmd)
	got, err := DecodeCommand(b)
	if err != nil || got.ID != "n2-17" || b[0] != 5 {
		t.Fatalf("decoded %+v, %v (version %d)", got, err, b[0])
	}
	cmd.ID = ""
	if b := EncodeCommand(nil, cmd); b[0] != 4 {
		t.Fatalf("a command without an id has version %d", b[0])
	}
	// An id in a version-4 command is refused, as one past the bound.
	b4 := EncodeCommand(nil, &Command{Ops: cmd.Ops, ID: "x"})
	b4[0] = 4
	if _, err := DecodeCommand(b4); err == nil {
		t.Fatal("a version-4 command with an id decoded")
	}
	long := make([]byte, MaxCommandIDBytes+1)
	for i := range long {
		long[i] = 'x'
	}
	if _, err := DecodeCommand(EncodeCommand(nil, &Command{Ops: cmd.Ops, ID: string(long)})); err == nil {
		t.Fatal("an id past MaxCommandIDBytes decoded")
	}
}

// TestResultsEncoding checks AppendResults and ReadResults.
func TestResultsEncoding(t *testing.T) {
	in := []OpResult{{Created: true, Doc: []byte(`{"id":"a"}`), Etag: `"1"`, Charge: 5.5}, {Err: fmt.Errorf("%w: x", ErrPreconditionFailed)}}
	b := AppendResults(nil, in)
	d := binfmt.NewReader(b, errBadOutcome)
	out := ReadResults(&d, 10)
	if d.Err() != nil || len(out) != 2 || !out[0].Created || string(out[0].Doc) != `{"id":"a"}` || out[0].Charge != 5.5 || !errors.Is(out[1].Err, ErrPreconditionFailed) || out[1].Err.Error() != in[1].Err.Error() {
		t.Fatalf("%+v, %v", out, d.Err())
	}
	for i := range len(b) {
		d := binfmt.NewReader(b[:i], errBadOutcome)
		if ReadResults(&d, 10); d.Err() == nil {
			t.Fatalf("truncated to %d bytes: no error", i)
		}
	}
	d = binfmt.NewReader(b, errBadOutcome)
	if ReadResults(&d, 1); d.Err() == nil {
		t.Fatal("more results than max: no error")
	}
}
