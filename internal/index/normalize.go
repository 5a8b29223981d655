package index

import (
	"encoding/json"
	"fmt"
	"strings"
)

// etagPath is the path every indexed policy excludes, as the service
// appends it.
const etagPath = `/"_etag"/?`

// legacyKinds and legacyTypes are the values of the pre-2018 "indexes"
// array of an included path: {"kind":"Hash"|"Range"|"Spatial",
// "dataType":"String"|"Number"|"Point"|..., "precision":n}.
var (
	legacyKinds = map[string]bool{"hash": true, "range": true, "spatial": true}
	legacyTypes = map[string]bool{"string": true, "number": true, "point": true, "polygon": true, "linestring": true, "multipolygon": true}
)

// Normalize rewrites an indexing policy the way the service stores and
// returns it:
//
//   - the legacy form is read: the root path "/" is "/*", and the
//     "indexes" arrays (Hash, Range and Spatial kinds with their
//     precision) are dropped, since every scalar path is range indexed;
//   - indexingMode is lower case ("consistent" when absent), automatic
//     is true when absent;
//   - a policy with neither includedPaths nor excludedPaths (the empty
//     policy {} among them) includes "/*";
//   - excludedPaths ends with /"_etag"/? unless the mode is "none".
//
// Other properties (compositeIndexes, spatialIndexes, ...) are kept as
// given. The result is a valid input of Compile when raw is.
func Normalize(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage(`{}`)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil || all == nil {
		return nil, fmt.Errorf("indexingPolicy is not a valid policy object: %s", raw)
	}
	var in struct {
		Mode      *string           `json:"indexingMode"`
		Automatic *bool             `json:"automatic"`
		Included  []json.RawMessage `json:"includedPaths"`
		Excluded  []json.RawMessage `json:"excludedPaths"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("indexingPolicy is not a valid policy object: %v", err)
	}
	mode := "consistent"
	if in.Mode != nil {
		mode = strings.ToLower(*in.Mode)
	}
	automatic := true
	if in.Automatic != nil {
		automatic = *in.Automatic
	}
	included, err := normalizePaths(in.Included)
	if err != nil {
		return nil, err
	}
	excluded, err := normalizePaths(in.Excluded)
	if err != nil {
		return nil, err
	}
	if mode != "none" {
		if len(included) == 0 && len(excluded) == 0 {
			included = []map[string]json.RawMessage{{"path": json.RawMessage(`"/*"`)}}
		}
		hasEtag := false
		for _, p := range excluded {
			var s string
			if json.Unmarshal(p["path"], &s) == nil && s == etagPath {
				hasEtag = true
			}
		}
		if !hasEtag {
			path, _ := json.Marshal(etagPath)
			excluded = append(excluded, map[string]json.RawMessage{"path": path})
		}
	}
	set := func(k string, v any) {
		b, _ := json.Marshal(v)
		all[k] = b
	}
	set("indexingMode", mode)
	set("automatic", automatic)
	set("includedPaths", included)
	set("excludedPaths", excluded)
	out, _ := json.Marshal(all)
	return out, nil
}

// normalizePaths rewrites includedPaths or excludedPaths entries: "/" is
// "/*", and the legacy "indexes" array of an included path is checked and
// dropped.
func normalizePaths(in []json.RawMessage) ([]map[string]json.RawMessage, error) {
	out := []map[string]json.RawMessage{}
	for _, raw := range in {
		var p map[string]json.RawMessage
		var path struct {
			Path    *string `json:"path"`
			Indexes []struct {
				Kind     string `json:"kind"`
				DataType string `json:"dataType"`
			} `json:"indexes"`
		}
		if err := json.Unmarshal(raw, &p); err != nil || p == nil {
			return nil, fmt.Errorf("indexingPolicy path %s is not an object like {\"path\": \"/*\"}", raw)
		}
		if err := json.Unmarshal(raw, &path); err != nil || path.Path == nil {
			return nil, fmt.Errorf("indexingPolicy path %s has no \"path\" string", raw)
		}
		for _, ix := range path.Indexes {
			if !legacyKinds[strings.ToLower(ix.Kind)] {
				return nil, fmt.Errorf("indexingPolicy path %q has an index of kind %q; it must be Hash, Range or Spatial", *path.Path, ix.Kind)
			}
			if ix.DataType != "" && !legacyTypes[strings.ToLower(ix.DataType)] {
				return nil, fmt.Errorf("indexingPolicy path %q has an index of dataType %q; it must be String, Number, Point, Polygon, LineString or MultiPolygon", *path.Path, ix.DataType)
			}
		}
		delete(p, "indexes")
		if *path.Path == "/" {
			p["path"] = json.RawMessage(`"/*"`)
		}
		out = append(out, p)
	}
	return out, nil
}
