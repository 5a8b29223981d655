package cosmos

import (
	"net/http"
	"strings"

	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/epk"
)

// authorizeGrant decides whether a request signed with a resource token may
// run op. The token's grant names one container (by name, and by the rid it
// had when the permission was written), optionally one item or one
// partition key in it, and a mode. It allows:
//
//   - reading the account (GET /), which the SDKs do first with any token;
//   - reading the container and its partition key ranges;
//   - the container's items, queries, query plans and batches, read-only
//     under the mode Read; under an item grant only that item's point
//     operations; under a partition-key grant only that key: a request
//     naming another key is refused, and one naming none (a query, a read
//     feed, a create) is given the granted key, so the engine scopes it or
//     rejects a document of another key. An item grant with a partition
//     key covers the item of that id in that logical partition alone (ids
//     are unique only within one); one without covers that id in every
//     partition, as an absent resourcePartitionKey covers every key in
//     Cosmos DB (Permission.ResourcePartitionKey: "absent/empty partition
//     key is superset of all partition keys");
//
// and nothing else: databases, other containers, offers, users and
// permissions, partition statistics and metrics need the primary or
// read-only key. A token whose permission was deleted or replaced (or whose
// user or database was) is refused with 401, without a storage read.
func (s *Server) authorizeGrant(req *request, op operation, g auth.Grant) error {
	if !s.engine.PermissionLive(g.Permission, g.Seq) {
		return errUnauthorized("the resource token's permission no longer exists or was replaced; read the permission again for a new token")
	}
	if op.kind == opReadAccount {
		return nil
	}
	covers := grantText(g)
	sameContainer := op.db == g.DB && op.coll == g.Coll && op.coll != ""
	if !sameContainer {
		return errForbidden("the resource token covers only %s; it does not cover %s /%s (%s): that needs the primary key",
			covers, req.r.Method, strings.Join(req.segs, "/"), op.kind)
	}
	if c, err := s.engine.Container(op.db, op.coll); err == nil && c.Info().Rid != g.CollRid {
		return errForbidden("the resource token covers container %s/%s as it was when the permission was written; that container was deleted and created again since", g.DB, g.Coll)
	}
	switch op.kind {
	case opError:
		return op.err
	case opReadContainer, opReadPartitionKeyRanges, opQueryPlan:
		return nil
	case opReadFeed, opChangeFeed, opQuery, opBatch, opCreateItem, opUpsertItem, opReadItem, opReplaceItem, opPatchItem, opDeleteItem:
	default:
		return errForbidden("the resource token covers only %s; it cannot %s: that needs the primary key", covers, op.kind)
	}
	if op.writes && !g.All {
		return errForbidden("the resource token is read-only: it covers %s; it cannot %s", covers, op.kind)
	}
	if g.Doc != "" && !isItemOp(op, g.Doc) {
		return errForbidden("the resource token covers only %s; it does not cover %s on /%s (%s)", covers, req.r.Method, strings.Join(req.segs, "/"), op.kind)
	}
	if g.PartitionKey == "" {
		return nil
	}
	granted, err := epk.ParseHeader(g.PartitionKey)
	if err != nil {
		// The server minted the grant from a key it parsed: only a bug
		// makes it unreadable, and then the token grants nothing.
		return errForbidden("the resource token's partition key cannot be read: %v", err)
	}
	key, has, err := partitionKeyHeader(req.r)
	if err != nil {
		return err
	}
	if !has {
		req.r.Header.Set(hdrPartitionKey, g.PartitionKey)
	} else if !key.Equal(granted) {
		return errForbidden("the resource token covers only %s; it does not cover partition key %s", covers, key)
	}
	req.scopeKey = granted
	return nil
}

// isItemOp reports whether op is a point operation on the item id.
func isItemOp(op operation, id string) bool {
	switch op.kind {
	case opReadItem, opReplaceItem, opPatchItem, opDeleteItem:
		return op.id == id
	}
	return false
}

// grantText describes what a grant covers, for messages.
func grantText(g auth.Grant) string {
	mode := "Read"
	if g.All {
		mode = "All"
	}
	what := "container dbs/" + g.DB + "/colls/" + g.Coll
	switch {
	case g.Doc != "" && g.PartitionKey != "":
		what = "item dbs/" + g.DB + "/colls/" + g.Coll + "/docs/" + g.Doc + " of partition key " + g.PartitionKey
	case g.Doc != "":
		what = "item dbs/" + g.DB + "/colls/" + g.Coll + "/docs/" + g.Doc
	case g.PartitionKey != "":
		what = "partition key " + g.PartitionKey + " of container dbs/" + g.DB + "/colls/" + g.Coll
	}
	return what + " (permission mode " + mode + ")"
}

// checkScopeKey refuses an operation of a batch whose partition key is not
// the one a resource token is scoped to (req.scopeKey, if any): a bulk
// request carries a key per operation.
func checkScopeKey(req *request, i int, key epk.Key) error {
	if req.scopeKey == nil || key.Equal(req.scopeKey) {
		return nil
	}
	return &apiError{status: http.StatusForbidden, code: "Forbidden",
		msg: "operation " + itoa(i) + " of the batch is for partition key " + key.String() + "; the resource token covers only partition key " + req.scopeKey.String()}
}
