package tableauth

import (
	"fmt"
	"strings"
	"time"
)

// Action is a Table service operation, as far as authorization cares.
type Action uint8

// The operations. A batch is authorized operation by operation: the server
// calls Allow for each sub-request with the grant of the outer request.
const (
	QueryTables          Action = iota + 1 // GET /Tables
	CreateTable                            // POST /Tables
	DeleteTable                            // DELETE /Tables('t')
	QueryEntities                          // GET /t() and GET /t(PartitionKey=..,RowKey=..)
	InsertEntity                           // POST /t
	UpdateEntity                           // PUT or MERGE with If-Match: replace or merge an existing entity
	UpsertEntity                           // PUT or MERGE without If-Match: insert-or-replace, insert-or-merge
	DeleteEntity                           // DELETE /t(..)
	GetTableACL                            // GET /t?comp=acl
	SetTableACL                            // PUT /t?comp=acl
	GetServiceProperties                   // GET /?restype=service&comp=properties
	SetServiceProperties                   // PUT /?restype=service&comp=properties
	GetServiceStats                        // GET /?restype=service&comp=stats
)

var actionNames = [...]string{
	QueryTables: "QueryTables", CreateTable: "CreateTable", DeleteTable: "DeleteTable",
	QueryEntities: "QueryEntities", InsertEntity: "InsertEntity", UpdateEntity: "UpdateEntity",
	UpsertEntity: "UpsertEntity", DeleteEntity: "DeleteEntity", GetTableACL: "GetTableACL",
	SetTableACL: "SetTableACL", GetServiceProperties: "GetServiceProperties",
	SetServiceProperties: "SetServiceProperties", GetServiceStats: "GetServiceStats",
}

func (a Action) String() string {
	if int(a) < len(actionNames) && actionNames[a] != "" {
		return actionNames[a]
	}
	return fmt.Sprintf("Action(%d)", uint8(a))
}

// readOnly reports whether a only reads.
func (a Action) readOnly() bool {
	switch a {
	case QueryTables, QueryEntities, GetTableACL, GetServiceProperties, GetServiceStats:
		return true
	}
	return false
}

func (a Action) entity() bool {
	switch a {
	case QueryEntities, InsertEntity, UpdateEntity, UpsertEntity, DeleteEntity:
		return true
	}
	return false
}

// KeyRange is the PartitionKey/RowKey range of a table SAS: (StartPK,
// StartRK) is the inclusive lower bound, (EndPK, EndRK) the inclusive upper
// bound, compared as (PartitionKey, RowKey) pairs. An empty StartPK means
// no lower bound, an empty EndPK no upper bound; an empty row key bound
// leaves that partition open at that end.
type KeyRange struct {
	StartPK, StartRK, EndPK, EndRK string
}

// IsZero reports whether the range is unbounded.
func (k KeyRange) IsZero() bool { return k == KeyRange{} }

// Contains reports whether the entity (pk, rk) is in the range. Keys are
// compared ordinally, byte by byte, which is the order in which the store
// keeps them (and code point order).
func (k KeyRange) Contains(pk, rk string) bool {
	if k.StartPK != "" {
		if pk < k.StartPK || pk == k.StartPK && k.StartRK != "" && rk < k.StartRK {
			return false
		}
	}
	if k.EndPK != "" {
		if pk > k.EndPK || pk == k.EndPK && k.EndRK != "" && rk > k.EndRK {
			return false
		}
	}
	return true
}

// Grant is what an authenticated request may do.
type Grant struct {
	Scheme   Scheme
	Key      string // Name of the key whose signature matched
	ReadOnly bool   // that key only permits reads

	// Shared access signatures only.
	Permissions   string    // the signed permissions (sp), as signed
	Table         string    // table SAS: the table (tn), lower-cased
	Range         KeyRange  // table SAS: the entities it reaches; zero means all
	ResourceTypes string    // account SAS: srt, a subset of "sco"
	Expiry        time.Time // se
}

// Allow reports whether the grant permits action on table (the table name
// from the URL; "" for service- and account-level actions). For an entity
// action under a table SAS with a key range the server must still check
// the entity with AllowEntity, and restrict queries to Range.
func (g Grant) Allow(action Action, table string) error {
	if action == 0 || int(action) >= len(actionNames) {
		return fail(ErrPermission, "unknown action %d", uint8(action))
	}
	if g.ReadOnly && !action.readOnly() {
		return fail(ErrPermission, "key %s is read-only and %s writes", g.Key, action)
	}
	switch g.Scheme {
	case SharedKey, SharedKeyLite:
		return nil
	case ServiceSAS:
		if !action.entity() {
			return fail(ErrPermission, "a table signature does not permit %s", action)
		}
		if !strings.EqualFold(table, g.Table) {
			return fail(ErrTable, "the signature is for table %q, the request for %q", g.Table, truncate(table, 64))
		}
		if need := servicePermissions(action); !hasAll(g.Permissions, need) {
			return fail(ErrPermission, "%s needs permissions %q, the signature has %q", action, need, g.Permissions)
		}
		return nil
	case AccountSAS:
		types, anyOf, allOf := accountPermissions(action)
		if types == "" {
			return fail(ErrPermission, "an account signature does not permit %s", action)
		}
		if !strings.ContainsAny(g.ResourceTypes, types) {
			return fail(ErrResourceType, "%s needs resource type %q, the signature has %q", action, types, g.ResourceTypes)
		}
		if anyOf != "" && !strings.ContainsAny(g.Permissions, anyOf) || !hasAll(g.Permissions, allOf) {
			return fail(ErrPermission, "%s needs permissions %q%q, the signature has %q", action, anyOf, allOf, g.Permissions)
		}
		return nil
	}
	return fail(ErrNoCredentials, "the grant has no scheme")
}

// AllowEntity is Allow for one entity: it also checks (pk, rk) against a
// table SAS's key range. For an insert, pk and rk are the new entity's.
func (g Grant) AllowEntity(action Action, table, pk, rk string) error {
	if err := g.Allow(action, table); err != nil {
		return err
	}
	if g.Scheme == ServiceSAS && !g.Range.Contains(pk, rk) {
		return fail(ErrOutsideRange, "entity (%q, %q) is outside the signed key range", truncate(pk, 64), truncate(rk, 64))
	}
	return nil
}

// servicePermissions are the letters a table SAS needs for action, all of
// them ("Create a service SAS", learn.microsoft.com/rest/api/storageservices/create-service-sas:
// insert-or-replace and insert-or-merge need both a and u).
func servicePermissions(a Action) string {
	switch a {
	case QueryEntities:
		return "r"
	case InsertEntity:
		return "a"
	case UpdateEntity:
		return "u"
	case UpsertEntity:
		return "au"
	case DeleteEntity:
		return "d"
	}
	return ""
}

// accountPermissions are the resource types (any of) and permissions (any
// of anyOf, all of allOf) an account SAS needs for action (Azurite
// OperationAccountSASPermission.ts; queries of entities accept the
// container type, as there, or the object type).
func accountPermissions(a Action) (types, anyOf, allOf string) {
	switch a {
	case GetServiceProperties, GetServiceStats:
		return "s", "", "r"
	case SetServiceProperties:
		return "s", "", "w"
	case QueryTables:
		return "c", "", "l"
	case CreateTable:
		return "c", "cw", ""
	case DeleteTable:
		return "c", "", "d"
	case QueryEntities:
		return "co", "", "r"
	case InsertEntity:
		return "o", "", "a"
	case UpdateEntity:
		return "o", "", "u"
	case UpsertEntity:
		return "o", "", "au"
	case DeleteEntity:
		return "o", "", "d"
	}
	return "", "", "" // table ACLs need the account key
}

func hasAll(have, need string) bool {
	for i := 0; i < len(need); i++ {
		if strings.IndexByte(have, need[i]) < 0 {
			return false
		}
	}
	return true
}

// EntityAction is the action of a request on an entity of a table (or a
// changeset operation) by its method and headers: GET queries, POST
// inserts, PUT, PATCH and MERGE (also POST with X-HTTP-Method: MERGE)
// update when they carry If-Match and upsert when they do not, DELETE
// deletes. Table-level and service-level requests are the server's to
// name. It returns 0 for a method the Table service does not accept.
func EntityAction(method string, header map[string][]string) Action {
	m := strings.ToUpper(method)
	get := func(name string) string {
		for k, v := range header {
			if strings.EqualFold(k, name) && len(v) > 0 {
				return strings.TrimSpace(v[0])
			}
		}
		return ""
	}
	if m == "POST" {
		if o := get("X-HTTP-Method"); o != "" {
			m = strings.ToUpper(o)
		}
	}
	switch m {
	case "GET", "HEAD":
		return QueryEntities
	case "POST":
		return InsertEntity
	case "PUT", "PATCH", "MERGE":
		if get("If-Match") != "" {
			return UpdateEntity
		}
		return UpsertEntity
	case "DELETE":
		return DeleteEntity
	}
	return 0
}
