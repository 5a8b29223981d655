// Package edm is the Entity Data Model type system of the Table API: the
// eight property types an entity may hold, a typed value, and the rules by
// which two values compare. The filter parser produces these values from
// literals, the server from an entity's JSON and its @odata.type
// annotations, and both compare them the same way.
package edm

import "time"

// Type is an EDM property type.
type Type uint8

// The property types of the Table service.
const (
	String Type = iota
	Int32
	Int64
	Double
	Boolean
	DateTime
	Guid
	Binary
)

var names = [...]string{
	String:   "Edm.String",
	Int32:    "Edm.Int32",
	Int64:    "Edm.Int64",
	Double:   "Edm.Double",
	Boolean:  "Edm.Boolean",
	DateTime: "Edm.DateTime",
	Guid:     "Edm.Guid",
	Binary:   "Edm.Binary",
}

// Name is the type's name as @odata.type spells it, e.g. "Edm.Int64".
func (t Type) Name() string {
	if int(t) < len(names) {
		return names[t]
	}
	return "Edm.Unknown"
}

// ParseType returns the type named name ("Edm.Int64").
func ParseType(name string) (Type, bool) {
	for i, n := range names {
		if n == name {
			return Type(i), true
		}
	}
	return 0, false
}

// A Value is a typed property value. Exactly the field of its Type is
// meaningful: S for String and Guid (a Guid in canonical lower-case form),
// I for Int32 and Int64, F for Double, B for Boolean, T for DateTime (UTC,
// 100 ns precision), Bin for Binary.
type Value struct {
	Type Type
	S    string
	I    int64
	F    float64
	B    bool
	T    time.Time
	Bin  []byte
}
