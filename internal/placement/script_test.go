package placement

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// TestScripts runs the scripts of testdata/: a cluster described step by
// step, with the planner's decisions printed. Rewrite the expected output
// with -rewrite, then read it: it is only right if it says what the
// planner should decide.
//
// Commands (lists are written (1,2,3); sizes take KiB, MiB, GiB):
//
//	config [rf=3] [seed=0] [max-in=1] [max-out=1] [rate=32MiB] [step-rate=32MiB]
//	nodes                          one node a line: ID [zone=Z] [state=S] [capacity=SIZE]
//	create container=C n=N [bytes=SIZE] [ru=N]
//	                               place N new partitions with Place; prints them
//	partition r=R replicas=(..) [leader=L] [container=C] [bytes=SIZE] [ru=N] [budget=N]
//	                               add a partition as it is
//	join id=N [zone=Z]             a node joins, live
//	kill id=N                      a node is dead; its partitions elect leaders
//	drain id=N                     CanRemove, then the node drains
//	remove id=N                    a drained node leaves the membership
//	suspect id=N / trust id=N      mark a node suspect or not
//	load r=R [ru=N] [bytes=SIZE]   change a partition's load or size
//	plan                           Plan; prints its changes and blocked
//	                               partitions, and starts the changes
//	step [n=1]                     moves in flight progress n steps (a
//	                               snapshot streams step-rate bytes a step)
//	apply                          step until no move is in flight
//	settle [limit=200]             plan and step until a plan decides nothing
//	                               with nothing in flight; prints the rounds
//	status                         each node's replicas, leaders and size
//	partitions                     each partition's voters and leader
//	holding id=N                   Holding
//	heat now=T [share=0.8] [window=60]
//	                               HeatSplits over samples, one a line:
//	                               rR at=T ru=N [budget=N]
//	histogram r=R                  the load histogram, one bucket a line:
//	                               MIN MAX RU
//	hotkeys r=R                    the hot keys, one a line: EPK SHARE
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		m := &model{cfg: DefaultConfig(), rate: 32 * mib}
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			out, err := runScript(m, td)
			if err != nil {
				out += "error: " + err.Error() + "\n"
			}
			if out == "" {
				return "ok\n"
			}
			return out
		})
	})
}

type args map[string][]string

func scriptArgs(td *datadriven.TestData) args {
	a := args{}
	for _, c := range td.CmdArgs {
		a[c.Key] = c.Vals
	}
	return a
}

func (a args) str(k, def string) string {
	if v := a[k]; len(v) > 0 {
		return v[0]
	}
	return def
}

func (a args) u64(k string, def uint64) (uint64, error) {
	v := a.str(k, "")
	if v == "" {
		return def, nil
	}
	return strconv.ParseUint(v, 10, 64)
}

func (a args) float(k string, def float64) (float64, error) {
	v := a.str(k, "")
	if v == "" {
		return def, nil
	}
	return strconv.ParseFloat(v, 64)
}

func (a args) size(k string, def int64) (int64, error) {
	v := a.str(k, "")
	if v == "" {
		return def, nil
	}
	return parseSize(v)
}

func (a args) ids(k string) ([]uint64, error) {
	var out []uint64
	for _, v := range a[k] {
		id, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func parseSize(s string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n * mult, err
}

func fmtSize(b int64) string {
	if b%mib == 0 {
		return fmt.Sprintf("%dMiB", b/mib)
	}
	return fmt.Sprintf("%d", b)
}

func (m *model) needMember(id uint64) (*Member, error) {
	if mm := m.member(id); mm != nil {
		return mm, nil
	}
	return nil, fmt.Errorf("no node %d", id)
}

func runScript(m *model, td *datadriven.TestData) (string, error) {
	a := scriptArgs(td)
	switch td.Cmd {
	case "config":
		rf, err := a.u64("rf", 3)
		if err != nil {
			return "", err
		}
		seed, err := a.u64("seed", 0)
		if err != nil {
			return "", err
		}
		in, err := a.u64("max-in", 1)
		if err != nil {
			return "", err
		}
		out, err := a.u64("max-out", 1)
		if err != nil {
			return "", err
		}
		rate, err := a.size("rate", 32*mib)
		if err != nil {
			return "", err
		}
		stepRate, err := a.size("step-rate", 32*mib)
		if err != nil {
			return "", err
		}
		m.cfg.ReplicationFactor, m.cfg.Seed = int(rf), seed
		m.cfg.MaxSnapshotsIn, m.cfg.MaxSnapshotsOut, m.cfg.RebalanceRate = int(in), int(out), rate
		m.rate = stepRate
		return "", nil
	case "nodes":
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			id, err := strconv.ParseUint(f[0], 10, 64)
			if err != nil {
				return "", err
			}
			mm := Member{ID: id}
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "zone":
					mm.Zone = v
				case "state":
					if mm.State, err = ParseNodeState(v); err != nil {
						return "", err
					}
				case "capacity":
					if mm.CapacityBytes, err = parseSize(v); err != nil {
						return "", err
					}
				default:
					return "", fmt.Errorf("unknown node field %q", k)
				}
			}
			m.members = append(m.members, mm)
		}
		return "", nil
	case "create":
		n, err := a.u64("n", 1)
		if err != nil {
			return "", err
		}
		bytes, err := a.size("bytes", 0)
		if err != nil {
			return "", err
		}
		ru, err := a.float("ru", 0)
		if err != nil {
			return "", err
		}
		before := len(m.parts)
		if err := m.create(a.str("container", "c"), int(n), func(int) int64 { return bytes }, func(int) float64 { return ru }); err != nil {
			return "", err
		}
		var b strings.Builder
		for _, p := range m.parts[before:] {
			fmt.Fprintf(&b, "r%d %v leader=%d\n", p.Range, p.Replicas, p.Leader)
		}
		return b.String(), nil
	case "partition":
		r, err := a.u64("r", 0)
		if err != nil {
			return "", err
		}
		reps, err := a.ids("replicas")
		if err != nil {
			return "", err
		}
		leader, err := a.u64("leader", 0)
		if err != nil {
			return "", err
		}
		bytes, err := a.size("bytes", 0)
		if err != nil {
			return "", err
		}
		ru, err := a.float("ru", 0)
		if err != nil {
			return "", err
		}
		budget, err := a.float("budget", 10000)
		if err != nil {
			return "", err
		}
		m.parts = append(m.parts, Partition{Range: r, Group: 1000 + r, Container: a.str("container", "c"), Min: "", Max: "FF",
			Replicas: reps, Leader: leader, Bytes: bytes, RU: ru, RUBudget: budget})
		return "", nil
	case "join":
		id, err := a.u64("id", 0)
		if err != nil {
			return "", err
		}
		if m.member(id) != nil {
			return "", fmt.Errorf("node %d is already a member", id)
		}
		m.members = append(m.members, Member{ID: id, Zone: a.str("zone", "")})
		return "", nil
	case "kill", "drain", "remove", "suspect", "trust", "holding":
		id, err := a.u64("id", 0)
		if err != nil {
			return "", err
		}
		if td.Cmd == "drain" {
			if err := CanRemove(m.state(), id); err != nil {
				return "", err
			}
		}
		mm, err := m.needMember(id)
		if err != nil {
			return "", err
		}
		switch td.Cmd {
		case "kill":
			m.kill(id)
		case "drain":
			mm.State = Draining
		case "remove":
			r, l, err := Holding(m.state(), id)
			if err != nil {
				return "", err
			}
			if r > 0 || l > 0 {
				return "", fmt.Errorf("node %d still holds %d replicas and leads %d", id, r, l)
			}
			mm.State = Removed
		case "suspect", "trust":
			mm.Suspect = td.Cmd == "suspect"
		case "holding":
			r, l, err := Holding(m.state(), id)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("node %d: %d replicas, %d leaders\n", id, r, l), nil
		}
		return "", nil
	case "load":
		r, err := a.u64("r", 0)
		if err != nil {
			return "", err
		}
		p := m.part(r)
		if p == nil {
			return "", fmt.Errorf("no range %d", r)
		}
		if p.RU, err = a.float("ru", p.RU); err != nil {
			return "", err
		}
		if p.Bytes, err = a.size("bytes", p.Bytes); err != nil {
			return "", err
		}
		return "", nil
	case "plan":
		s, err := Plan(m.state())
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, c := range s.Changes {
			fmt.Fprintln(&b, c)
		}
		for _, x := range s.Blocked {
			fmt.Fprintf(&b, "blocked %v\n", x)
		}
		if err := m.start(s); err != nil {
			return b.String(), err
		}
		if len(s.Changes) == 0 && len(s.Blocked) == 0 {
			b.WriteString("no changes\n")
		}
		return b.String(), nil
	case "step":
		n, err := a.u64("n", 1)
		if err != nil {
			return "", err
		}
		for range min(n, 10000) {
			if err := m.step(); err != nil {
				return "", err
			}
		}
		return m.flights(), nil
	case "apply":
		for i := 0; len(m.flight) > 0; i++ {
			if i == 10000 {
				return "", errors.New("moves still in flight after 10000 steps")
			}
			if err := m.step(); err != nil {
				return "", err
			}
		}
		return m.partitionsString(), nil
	case "settle":
		limit, err := a.u64("limit", 200)
		if err != nil {
			return "", err
		}
		n, err := m.settle(int(limit))
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("settled after %d rounds\n", n) + m.summary(), nil
	case "status":
		return m.summary() + m.flights(), nil
	case "partitions":
		return m.partitionsString(), nil
	case "histogram", "hotkeys":
		r, err := a.u64("r", 0)
		if err != nil {
			return "", err
		}
		p := m.part(r)
		if p == nil {
			return "", fmt.Errorf("no range %d", r)
		}
		if td.Cmd == "histogram" {
			p.Load = nil
		} else {
			p.HotKeys = nil
		}
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			if td.Cmd == "histogram" && len(f) == 3 {
				ru, err := strconv.ParseFloat(f[2], 64)
				if err != nil {
					return "", err
				}
				p.Load = append(p.Load, LoadBucket{Min: f[0], Max: f[1], RU: ru})
			} else if td.Cmd == "hotkeys" && len(f) == 2 {
				sh, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					return "", err
				}
				p.HotKeys = append(p.HotKeys, HotKey{EPK: f[0], Share: sh})
			} else if len(f) > 0 {
				return "", fmt.Errorf("bad line %q", line)
			}
		}
		return "", nil
	case "heat":
		now, err := a.u64("now", 0)
		if err != nil {
			return "", err
		}
		s := m.state()
		if s.Config.HeatShare, err = a.float("share", 0); err != nil {
			return "", err
		}
		w, err := a.u64("window", 0)
		if err != nil {
			return "", err
		}
		s.Config.HeatWindow = int64(w)
		h := History{Now: int64(now)}
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 {
				continue
			}
			r, err := strconv.ParseUint(strings.TrimPrefix(f[0], "r"), 10, 64)
			if err != nil {
				return "", err
			}
			x := HeatSample{Range: r}
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				n, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return "", err
				}
				switch k {
				case "at":
					x.At = int64(n)
				case "ru":
					x.RU = n
				case "budget":
					x.Budget = n
				default:
					return "", fmt.Errorf("unknown sample field %q", k)
				}
			}
			h.Samples = append(h.Samples, x)
		}
		ds, err := HeatSplits(s, h)
		if err != nil {
			return "", err
		}
		var b strings.Builder
		for _, d := range ds {
			fmt.Fprintln(&b, d)
		}
		if len(ds) == 0 {
			b.WriteString("nothing hot\n")
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("unknown command %q", td.Cmd)
}

func (m *model) flights() string {
	var b strings.Builder
	for _, f := range m.flight {
		fmt.Fprintf(&b, "in flight (%d steps left): r%d %v from=%d to=%d\n", f.left, f.c.Range, f.c.Kind, f.c.From, f.c.To)
	}
	return b.String()
}

func (m *model) partitionsString() string {
	ps := slices.Clone(m.parts)
	slices.SortFunc(ps, func(a, b Partition) int { return cmpU64(a.Range, b.Range) })
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "r%d %s %v leader=%d %s %.0fRU/s\n", p.Range, p.Container, p.Replicas, p.Leader, fmtSize(p.Bytes), p.RU)
	}
	return b.String()
}
