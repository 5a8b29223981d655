package gremlin

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	gremlingo "github.com/apache/tinkerpop/gremlin-go/v3/driver"

	"github.com/parsecdb/parsec/internal/auth"
)

// loadCrew loads TinkerPop's "crew" toy graph (gremlin-server
// data/tinkerpop-crew; the reference documentation's "Vertex Properties"
// and "The Crew" examples): four people whose location is a
// multi-property, each value with the meta-properties startTime and
// (but for the current one) endTime, two pieces of software, and the
// develops/uses/traverses edges, ids as TinkerPop's. Each vertex is in the
// logical partition of its name (the container's key is /name). The
// script forms are Cosmos DB's: property(list, k, v, metaKey, metaValue)
// (Azure/azure-cosmos-dotnet-v2 issue 632) and addE(...).to(g.V(...)).
func loadCrew(t *testing.T, c *gremlingo.Client) {
	t.Helper()
	type loc struct {
		place      string
		start, end int
	}
	people := []struct {
		id, name string
		locs     []loc
	}{
		{"1", "marko", []loc{{"san diego", 1997, 2001}, {"santa cruz", 2001, 2004}, {"brussels", 2004, 2005}, {"santa fe", 2005, 0}}},
		{"7", "stephen", []loc{{"centreville", 1990, 2000}, {"dulles", 2000, 2006}, {"purcellville", 2006, 0}}},
		{"8", "matthias", []loc{{"bremen", 2004, 2007}, {"baltimore", 2007, 2011}, {"oakland", 2011, 2014}, {"seattle", 2014, 0}}},
		{"9", "daniel", []loc{{"spremberg", 1982, 2005}, {"kaiserslautern", 2005, 2009}, {"aachen", 2009, 0}}},
	}
	for _, p := range people {
		var b strings.Builder
		fmt.Fprintf(&b, "g.addV('person').property('id', '%s').property('name', '%s')", p.id, p.name)
		for _, l := range p.locs {
			fmt.Fprintf(&b, ".property(list, 'location', '%s', 'startTime', %d", l.place, l.start)
			if l.end != 0 {
				fmt.Fprintf(&b, ", 'endTime', %d", l.end)
			}
			b.WriteString(")")
		}
		must(t, c, b.String())
	}
	must(t, c, "g.addV('software').property('id', '10').property('name', 'gremlin')")
	must(t, c, "g.addV('software').property('id', '11').property('name', 'tinkergraph')")
	names := map[string]string{"1": "marko", "7": "stephen", "8": "matthias", "9": "daniel", "10": "gremlin", "11": "tinkergraph"}
	for _, e := range []struct{ id, label, out, in, key string }{
		{"13", "develops", "1", "10", "since:2009"}, {"14", "develops", "1", "11", "since:2010"},
		{"15", "uses", "1", "10", "skill:4"}, {"16", "uses", "1", "11", "skill:5"},
		{"17", "develops", "7", "10", "since:2010"}, {"18", "develops", "7", "11", "since:2011"},
		{"19", "uses", "7", "10", "skill:5"}, {"20", "uses", "7", "11", "skill:4"},
		{"21", "develops", "8", "10", "since:2012"}, {"22", "uses", "8", "10", "skill:3"},
		{"23", "uses", "8", "11", "skill:3"}, {"24", "uses", "9", "10", "skill:5"},
		{"25", "uses", "9", "11", "skill:3"}, {"26", "traverses", "10", "11", ""},
	} {
		script := "g.V([opk, o]).addE(lbl).to(g.V([ipk, i])).property('id', eid)"
		if k, v, ok := strings.Cut(e.key, ":"); ok {
			script += fmt.Sprintf(".property('%s', %s)", k, v)
		}
		must(t, c, script, map[string]any{"opk": names[e.out], "o": e.out, "ipk": names[e.in], "i": e.in, "lbl": e.label, "eid": e.id})
	}
}

// show renders a result from gremlin-go: vertex properties as
// vp[key->value], properties as p[key->value], lists in order, maps with
// their entries sorted by key.
func show(v any) string {
	switch x := v.(type) {
	case *gremlingo.Vertex:
		return fmt.Sprintf("v[%v]", x.Id)
	case *gremlingo.VertexProperty:
		return fmt.Sprintf("vp[%s->%s]", x.Label, show(x.Value))
	case *gremlingo.Property:
		return fmt.Sprintf("p[%s->%s]", x.Key, show(x.Value))
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = show(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case map[any]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, show(k)+":"+show(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ",") + "}"
	case string:
		return x
	case int64:
		return fmt.Sprint(x)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

// TestCrewScripts runs property, meta-property and valueMap traversals
// over the crew graph. The answers are written by hand from the Gremlin
// reference documentation (tinkerpop.apache.org/docs/current/reference/):
// the sections named on each case, over the same graph; with Cosmos DB's
// differences: valueMap() gives every vertex property as a list (the
// partition key property name included), and integers read back as Longs.
func TestCrewScripts(t *testing.T) {
	_, url := start(t)
	c := client(t, url, "crew", auth.EmulatorKey)
	loadCrew(t, c)
	for _, tc := range []struct {
		section, script string
		want            string // results shown and joined with " | "
		ordered         bool
	}{
		// "Vertex Properties": marko's locations, in the order written.
		{"Vertex Properties", "g.V(['marko','1']).properties('location')",
			"vp[location->san diego] | vp[location->santa cruz] | vp[location->brussels] | vp[location->santa fe]", true},
		{"Vertex Properties", "g.V(['marko','1']).values('location')", "san diego | santa cruz | brussels | santa fe", true},
		// "Vertex Properties": the current location has no endTime.
		{"Vertex Properties", "g.V().as('a').properties('location').as('b').hasNot('endTime').as('c').select('a','b','c').by('name').by(value).by('startTime')",
			"{a:daniel,b:aachen,c:2009} | {a:marko,b:santa fe,c:2005} | {a:matthias,b:seattle,c:2014} | {a:stephen,b:purcellville,c:2006}", false},
		// "Properties Step": meta-properties of a vertex property.
		{"Properties Step", "g.V(['marko','1']).properties('location').properties()",
			"p[endTime->2001] | p[endTime->2004] | p[endTime->2005] | p[startTime->1997] | p[startTime->2001] | p[startTime->2004] | p[startTime->2005]", false},
		{"Properties Step", "g.V(['marko','1']).properties('location').has('endTime').value()", "brussels | san diego | santa cruz", false},
		{"Properties Step", "g.V(['daniel','9']).properties()",
			"vp[location->aachen] | vp[location->kaiserslautern] | vp[location->spremberg] | vp[name->daniel]", false},
		// "ValueMap Step": every property as a list.
		{"ValueMap Step", "g.V(['marko','1']).valueMap()", "{location:[san diego,santa cruz,brussels,santa fe],name:[marko]}", true},
		{"ValueMap Step", "g.V(['stephen','7']).valueMap('location')", "{location:[centreville,dulles,purcellville]}", true},
		{"ValueMap Step", "g.V(['marko','1']).properties('location').valueMap()",
			"{endTime:2001,startTime:1997} | {endTime:2004,startTime:2001} | {endTime:2005,startTime:2004} | {startTime:2005}", true},
		// "Has Step" on vertex properties: places moved to after 2004.
		{"Has Step", "g.V().properties('location').has('startTime', gt(2004)).value()",
			"aachen | baltimore | kaiserslautern | oakland | purcellville | santa fe | seattle", false},
		{"Count Step", "g.V().properties('location').count()", "14", true},
		// "The Crew" edges.
		{"Vertex Steps", "g.V(['gremlin','10']).in('uses').values('name')", "daniel | marko | matthias | stephen", false},
		{"Vertex Steps", "g.V(['stephen','7']).outE('develops').values('since')", "2010 | 2011", false},
		{"Order Step", "g.V(['gremlin','10']).inE('uses').order().by('skill', desc).by(outV().values('name')).outV().values('name')",
			"daniel | stephen | marko | matthias", true},
		{"Vertex Steps", "g.V(['gremlin','10']).out('traverses').values('name')", "tinkergraph", true},
	} {
		got, _, err := submit(t, c, tc.script)
		if err != nil {
			t.Errorf("%s (%s): %v", tc.script, tc.section, err)
			continue
		}
		shown := make([]string, len(got))
		for i, v := range got {
			shown[i] = show(v)
		}
		if !tc.ordered {
			sort.Strings(shown)
		}
		if g := strings.Join(shown, " | "); g != tc.want {
			t.Errorf("%s (%s)\n got: %s\nwant: %s", tc.script, tc.section, g, tc.want)
		}
	}
}
