package cosmos

import (
	"net/http"
	"strings"
)

// opKind is the operation a request runs.
type opKind uint8

const (
	// opError runs nothing: the request is answered with operation.err
	// (no such resource, a method the resource does not take, a feature
	// this server does not have).
	opError opKind = iota
	opReadAccount
	opListDatabases
	opQueryDatabases
	opCreateDatabase
	opReadDatabase
	opDeleteDatabase
	opListContainers
	opQueryContainers
	opCreateContainer
	opReadContainer
	opReplaceContainer
	opDeleteContainer
	opReadFeed
	opChangeFeed
	opQueryPlan
	opQuery
	opBatch
	opCreateItem
	opUpsertItem
	opReadItem
	opReplaceItem
	opPatchItem
	opDeleteItem
	opReadPartitionKeyRanges
	opReadPartitionStats
	opAdvise
	opDeletePartitionKey
	opListEncryptionKeys
	opQueryEncryptionKeys
	opCreateEncryptionKey
	opReadEncryptionKey
	opReplaceEncryptionKey
	opListOffers
	opQueryOffers
	opReadOffer
	opReplaceOffer
	opListConflicts
	opReadConflict
	opListUsers
	opQueryUsers
	opCreateUser
	opUpsertUser
	opReadUser
	opReplaceUser
	opDeleteUser
	opListPermissions
	opQueryPermissions
	opCreatePermission
	opUpsertPermission
	opReadPermission
	opReplacePermission
	opDeletePermission
	// Scripts (stored procedures, triggers, user-defined functions).
	opListScripts
	opCreateScript
	opQueryScripts
	opReadScript
	opReplaceScript
	opDeleteScript
	opExecuteProcedure
	// opReadMetrics is GET /metrics, which ServeHTTP serves before
	// classify (see serveMetrics); it only reads.
	opReadMetrics
	// opReadCluster is GET /_cluster.
	opReadCluster
)

var opNames = [...]string{
	opError: "error", opReadAccount: "read account", opListDatabases: "list databases", opQueryDatabases: "query databases",
	opCreateDatabase: "create database", opReadDatabase: "read database", opDeleteDatabase: "delete database",
	opListContainers: "list containers", opQueryContainers: "query containers", opCreateContainer: "create container", opReadContainer: "read container",
	opReplaceContainer: "replace container", opDeleteContainer: "delete container", opReadFeed: "read items feed", opChangeFeed: "read the change feed",
	opQueryPlan: "query plan", opQuery: "query items", opBatch: "batch", opCreateItem: "create item",
	opUpsertItem: "upsert item", opReadItem: "read item", opReplaceItem: "replace item", opPatchItem: "patch item",
	opDeleteItem: "delete item", opReadPartitionKeyRanges: "read partition key ranges",
	opReadPartitionStats: "read partition statistics", opAdvise: "advise on the partition key", opDeletePartitionKey: "delete a partition key's items",
	opListEncryptionKeys: "list client encryption keys", opQueryEncryptionKeys: "query client encryption keys",
	opCreateEncryptionKey: "create client encryption key", opReadEncryptionKey: "read client encryption key",
	opReplaceEncryptionKey: "replace client encryption key", opListOffers: "list offers", opQueryOffers: "query offers",
	opReadOffer: "read offer", opReplaceOffer: "replace offer", opReadMetrics: "read metrics", opReadCluster: "read the cluster status",
	opListConflicts: "list conflicts", opReadConflict: "read conflict",
	opListUsers: "list users", opQueryUsers: "query users", opCreateUser: "create user",
	opUpsertUser: "upsert user", opReadUser: "read user", opReplaceUser: "replace user", opDeleteUser: "delete user",
	opListPermissions: "list permissions", opQueryPermissions: "query permissions",
	opCreatePermission: "create permission", opUpsertPermission: "upsert permission",
	opReadPermission: "read permission", opReplacePermission: "replace permission",
	opDeletePermission: "delete permission",
	opListScripts:      "list scripts", opCreateScript: "create script", opQueryScripts: "query scripts",
	opReadScript: "read script", opReplaceScript: "replace script", opDeleteScript: "delete script",
	opExecuteProcedure: "execute stored procedure",
}

func (k opKind) String() string {
	if int(k) < len(opNames) {
		return opNames[k]
	}
	return "opKind(" + itoa(int(k)) + ")"
}

// operation is what a request does, decided once by classify from its
// method, path and headers. The authorizer refuses the read-only key when
// writes is set, and route runs exactly kind: nothing else inspects the
// request to choose what to run, so what is authorized is what runs.
type operation struct {
	kind opKind
	// writes is set when the operation may change stored state, and for
	// every opError reached with a method other than GET or HEAD (the
	// read-only key is refused before it learns what exists).
	writes bool
	// db, coll and id are the addressed database, container and item,
	// offer or permission id, and user the addressed user (all
	// percent-decoded), as far as the path names them.
	db, coll, id, user string
	// err is the answer of an opError.
	err error
	// scripts is the script feed a script operation addresses: "sprocs",
	// "triggers" or "udfs".
	scripts string
}

// classify returns the operation of a request with the given method,
// percent-decoded path segments (see splitPath) and headers. It is pure:
// the same inputs give the same operation, and it reads no body.
//
// A POST to an items feed is, by headers in this order: a query plan
// (x-ms-cosmos-is-query-plan-request), a batch (x-ms-cosmos-is-batch-request),
// a query (Content-Type application/query+json, x-ms-documentdb-query or
// x-ms-documentdb-isquery), an upsert (x-ms-documentdb-is-upsert) or a create.
// POSTs to the databases and containers feeds are creates unless they are
// queries, which run over the catalog in memory; the query-plan and batch headers
// mean nothing there.
func classify(method string, segs []string, h http.Header) operation {
	n := len(segs)
	switch {
	case n == 0:
		if method == http.MethodGet {
			return operation{kind: opReadAccount}
		}
		return errOp(method, errMethod(method, "the account"))
	case segs[0] == "offers" && n == 1:
		switch {
		case method == http.MethodGet:
			return operation{kind: opListOffers}
		case method == http.MethodPost && isQueryHeader(h):
			return operation{kind: opQueryOffers}
		}
		return errOp(method, errMethod(method, "offers"))
	case segs[0] == "offers" && n == 2:
		switch method {
		case http.MethodGet:
			return operation{kind: opReadOffer, id: segs[1]}
		case http.MethodPut:
			return operation{kind: opReplaceOffer, id: segs[1], writes: true}
		}
		return errOp(method, errMethod(method, "offers"))
	case segs[0] == ClusterPath[1:] && n == 1:
		if method == http.MethodGet {
			return operation{kind: opReadCluster}
		}
		return errOp(method, errMethod(method, ClusterPath))
	case segs[0] != "dbs":
		return errOp(method, errNotFound("no resource at /%s", strings.Join(segs, "/")))
	case n == 1:
		switch {
		case method == http.MethodGet:
			return operation{kind: opListDatabases}
		case method == http.MethodPost && isQueryHeader(h):
			return operation{kind: opQueryDatabases}
		case method == http.MethodPost:
			return operation{kind: opCreateDatabase, writes: true}
		}
		return errOp(method, errMethod(method, "the databases feed"))
	case n == 2:
		switch method {
		case http.MethodGet:
			return operation{kind: opReadDatabase, db: segs[1]}
		case http.MethodDelete:
			return operation{kind: opDeleteDatabase, db: segs[1], writes: true}
		}
		return errOp(method, errMethod(method, "a database"))
	case segs[2] == "users":
		return classifyUsers(method, segs, h)
	case segs[2] == "clientencryptionkeys" && n == 3:
		switch {
		case method == http.MethodGet:
			return operation{kind: opListEncryptionKeys, db: segs[1]}
		case method == http.MethodPost && isQueryHeader(h):
			return operation{kind: opQueryEncryptionKeys, db: segs[1]}
		case method == http.MethodPost:
			return operation{kind: opCreateEncryptionKey, db: segs[1], writes: true}
		}
		return errOp(method, errMethod(method, "the client encryption keys feed"))
	case segs[2] == "clientencryptionkeys" && n == 4:
		switch method {
		case http.MethodGet:
			return operation{kind: opReadEncryptionKey, db: segs[1], id: segs[3]}
		case http.MethodPut:
			return operation{kind: opReplaceEncryptionKey, db: segs[1], id: segs[3], writes: true}
		}
		return errOp(method, errMethod(method, "a client encryption key"))
	case segs[2] != "colls":
		return errOp(method, errNotFound("no resource at /%s", strings.Join(segs, "/")))
	case n == 3:
		db := segs[1]
		switch {
		case method == http.MethodGet:
			return operation{kind: opListContainers, db: db}
		case method == http.MethodPost && isQueryHeader(h):
			return operation{kind: opQueryContainers, db: db}
		case method == http.MethodPost:
			return operation{kind: opCreateContainer, db: db, writes: true}
		}
		return errOp(method, errMethod(method, "the containers feed"))
	case n == 4:
		db, coll := segs[1], segs[3]
		switch method {
		case http.MethodGet:
			return operation{kind: opReadContainer, db: db, coll: coll}
		case http.MethodPut:
			return operation{kind: opReplaceContainer, db: db, coll: coll, writes: true}
		case http.MethodDelete:
			return operation{kind: opDeleteContainer, db: db, coll: coll, writes: true}
		}
		return errOp(method, errMethod(method, "a container"))
	}
	db, coll := segs[1], segs[3]
	switch {
	case n == 5 && segs[4] == "docs":
		return classifyItemsFeed(method, db, coll, h)
	case n == 6 && segs[4] == "docs":
		op := operation{db: db, coll: coll, id: segs[5]}
		switch method {
		case http.MethodGet:
			op.kind = opReadItem
		case http.MethodPut:
			op.kind, op.writes = opReplaceItem, true
		case http.MethodPatch:
			op.kind, op.writes = opPatchItem, true
		case http.MethodDelete:
			op.kind, op.writes = opDeleteItem, true
		default:
			return errOp(method, errMethod(method, "an item"))
		}
		return op
	case n == 5 && segs[4] == "pkranges":
		if method == http.MethodGet {
			return operation{kind: opReadPartitionKeyRanges, db: db, coll: coll}
		}
		return errOp(method, errMethod(method, "partition key ranges"))
	case n == 5 && segs[4] == "partitions":
		if method == http.MethodGet {
			return operation{kind: opReadPartitionStats, db: db, coll: coll}
		}
		return errOp(method, errMethod(method, "partition statistics"))
	case n == 6 && segs[4] == "operations" && segs[5] == "partitionkeydelete":
		if method == http.MethodPost {
			return operation{kind: opDeletePartitionKey, db: db, coll: coll, writes: true}
		}
		return errOp(method, errMethod(method, "the partition key delete"))
	case n == 5 && segs[4] == "advise":
		if method == http.MethodPost {
			return operation{kind: opAdvise, db: db, coll: coll}
		}
		return errOp(method, errMethod(method, "the partition-key advisor"))
	case n == 5 && segs[4] == "conflicts":
		if method == http.MethodGet || method == http.MethodPost && isQueryHeader(h) {
			return operation{kind: opListConflicts, db: db, coll: coll}
		}
		return errOp(method, errMethod(method, "the conflicts feed"))
	case n == 6 && segs[4] == "conflicts":
		if method == http.MethodGet {
			return operation{kind: opReadConflict, db: db, coll: coll, id: segs[5]}
		}
		return errOp(method, errMethod(method, "a conflict"))
	case isScriptFeed(segs[4]) && (n == 5 || n == 6):
		return classifyScripts(method, segs, h)
	}
	return errOp(method, errNotFound("no resource at /%s", strings.Join(segs, "/")))
}

// classifyScripts classifies a request to a container's scripts feed
// (n == 5) or one script (n == 6). A POST to a stored procedure executes
// it.
func classifyScripts(method string, segs []string, h http.Header) operation {
	op := operation{db: segs[1], coll: segs[3], scripts: segs[4]}
	if len(segs) == 5 {
		switch {
		case method == http.MethodGet:
			op.kind = opListScripts
		case method == http.MethodPost && isQueryHeader(h):
			op.kind = opQueryScripts
		case method == http.MethodPost:
			op.kind, op.writes = opCreateScript, true
		default:
			return errOp(method, errMethod(method, segs[4]))
		}
		return op
	}
	op.id = segs[5]
	switch {
	case method == http.MethodGet:
		op.kind = opReadScript
	case method == http.MethodPut:
		op.kind, op.writes = opReplaceScript, true
	case method == http.MethodDelete:
		op.kind, op.writes = opDeleteScript, true
	case method == http.MethodPost && segs[4] == "sprocs":
		op.kind, op.writes = opExecuteProcedure, true
	default:
		return errOp(method, errMethod(method, "a script"))
	}
	return op
}

// classifyItemsFeed classifies a request to /dbs/{db}/colls/{coll}/docs.
func classifyItemsFeed(method, db, coll string, h http.Header) operation {
	op := operation{db: db, coll: coll}
	switch method {
	case http.MethodGet:
		if h.Get("A-IM") != "" {
			op.kind = opChangeFeed
			return op
		}
		op.kind = opReadFeed
	case http.MethodPost:
		switch {
		case isTrue(h, "x-ms-cosmos-is-query-plan-request"):
			op.kind = opQueryPlan
		case isTrue(h, "x-ms-cosmos-is-batch-request"):
			op.kind, op.writes = opBatch, true
		case isQueryHeader(h):
			op.kind = opQuery
		case isTrue(h, "x-ms-documentdb-is-upsert"):
			op.kind, op.writes = opUpsertItem, true
		default:
			op.kind, op.writes = opCreateItem, true
		}
	default:
		return errOp(method, errMethod(method, "the items feed"))
	}
	return op
}

// errOp is an operation that answers err. It counts as a write unless the
// method is GET or HEAD, so that the read-only key gets 403 for any other
// method whatever the path.
func errOp(method string, err error) operation {
	return operation{err: err, writes: method != http.MethodGet && method != http.MethodHead}
}

// isQueryHeader reports whether the headers mark a POST as a query.
func isQueryHeader(h http.Header) bool {
	return strings.HasPrefix(h.Get("Content-Type"), "application/query+json") ||
		isTrue(h, "x-ms-documentdb-query") || isTrue(h, "x-ms-documentdb-isquery")
}

// isTrue reads a boolean header, which SDKs send as true, True or TRUE.
func isTrue(h http.Header, name string) bool {
	return strings.EqualFold(h.Get(name), "true")
}
