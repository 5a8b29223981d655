package host

import (
	"flag"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

var idleGroups = flag.Int("idle-groups", 10_000, "groups of BenchmarkIdleGroups")

// BenchmarkIdleGroups measures what idle groups cost: -idle-groups groups
// (default 10,000) on three in-process nodes over the in-memory transport,
// each elected with leaders spread over the nodes, then left idle while
// every node ticks every 10 ms (a server's pace) for 5 s. It reports the
// heap each replica holds, the CPU the idle nodes use (as a share of one
// core, from the process's rusage) and the messages they send per second,
// with quiescence on and off. Run it with -benchtime 1x.
func BenchmarkIdleGroups(b *testing.B) {
	for _, quiesce := range []bool{true, false} {
		b.Run(fmt.Sprintf("quiesce=%v", quiesce), func(b *testing.B) {
			for range b.N {
				idleGroupsOnce(b, *idleGroups, quiesce)
			}
		})
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func idleGroupsOnce(b *testing.B, groups int, quiesce bool) {
	c := newCluster(b, 0, func(cfg *Config) {
		cfg.Quiesce, cfg.Logf = quiesce, func(string, ...any) {}
		cfg.NewStateMachine = func(uint64) (StateMachine, error) { return &counter{}, nil }
	})
	heap0 := heapInUse()
	start := time.Now()
	for g := range uint64(groups) {
		c.groups = append(c.groups, 100+g)
		for _, id := range voters {
			if err := c.nodes[id].h.CreateGroup(100+g, voters); err != nil {
				b.Fatal(err)
			}
		}
	}
	// Leaders spread over the nodes: each group's campaign starts on one.
	for i, g := range c.groups {
		if err := c.nodes[voters[i%len(voters)]].h.Campaign(g); err != nil {
			b.Fatal(err)
		}
	}
	c.waitFor("every group to elect a leader", func() bool {
		for _, g := range c.groups {
			st, err := c.nodes[voters[0]].h.Status(g)
			if err != nil || st.Lead == 0 {
				return false
			}
		}
		return true
	})
	if quiesce {
		c.waitFor("every group to quiesce", func() bool {
			for _, id := range voters {
				if c.nodes[id].h.Quiesced() != groups {
					return false
				}
			}
			return true
		})
	}
	ready := time.Since(start)
	heap := heapInUse()
	sent0, cpu0, t0 := c.net.Stats().Sent, cpuTime(), time.Now()
	const idle = 5 * time.Second
	for time.Since(t0) < idle {
		c.tick()
		time.Sleep(10 * time.Millisecond)
	}
	elapsed := time.Since(t0)
	cpu := cpuTime() - cpu0
	sent := c.net.Stats().Sent - sent0
	replicas := float64(groups * len(voters))
	b.ReportMetric(float64(heap-heap0)/replicas, "heap-B/replica")
	b.ReportMetric(100*cpu.Seconds()/elapsed.Seconds(), "idle-cpu-%")
	b.ReportMetric(float64(sent)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(ready.Seconds(), "s-to-elect")
	b.Logf("%d groups on 3 nodes, quiesce=%v: elected in %v; heap %.0f B per replica; idle CPU %.1f%% of a core; %d messages in %v",
		groups, quiesce, ready.Round(time.Millisecond), float64(heap-heap0)/replicas, 100*cpu.Seconds()/elapsed.Seconds(), sent, elapsed.Round(time.Millisecond))
}
