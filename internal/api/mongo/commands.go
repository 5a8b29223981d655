package mongo

import (
	"math"
	"os"
	"runtime"
	"sort"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// request is one command being run.
type request struct {
	c    *conn
	s    *Server
	name string   // the command's name, as sent
	db   string   // $db
	raw  bson.Raw // the whole command
	cmd  bson.D   // the command decoded
	// sess is the session whose transaction the command is part of
	// (locked while it runs); nil outside transactions.
	sess *session
	// limit is the command's maxTimeMS (nil: none).
	limit *timeLimit
	// held is what the command holds in the server's query memory
	// (memory.go).
	held int64
}

type handler func(r *request) (bson.D, error)

var commands map[string]handler

func init() {
	commands = map[string]handler{
		"hello": cmdHello, "isMaster": cmdHello, "ismaster": cmdHello,
		"ping":                     func(*request) (bson.D, error) { return nil, nil },
		"buildInfo":                cmdBuildInfo,
		"buildinfo":                cmdBuildInfo,
		"getParameter":             cmdGetParameter,
		"getLog":                   cmdGetLog,
		"whatsmyuri":               cmdWhatsMyURI,
		"connectionStatus":         cmdConnectionStatus,
		"hostInfo":                 cmdHostInfo,
		"serverStatus":             cmdServerStatus,
		"listCommands":             cmdListCommands,
		"endSessions":              cmdEndSessions,
		"getCmdLineOpts":           cmdGetCmdLineOpts,
		"insert":                   cmdInsert,
		"find":                     cmdFind,
		"getMore":                  cmdGetMore,
		"killCursors":              cmdKillCursors,
		"update":                   cmdUpdate,
		"delete":                   cmdDelete,
		"findAndModify":            cmdFindAndModify,
		"findandmodify":            cmdFindAndModify,
		"count":                    cmdCount,
		"distinct":                 cmdDistinct,
		"aggregate":                cmdAggregate,
		"listDatabases":            cmdListDatabases,
		"listCollections":          cmdListCollections,
		"create":                   cmdCreate,
		"drop":                     cmdDrop,
		"dropDatabase":             cmdDropDatabase,
		"createIndexes":            cmdCreateIndexes,
		"listIndexes":              cmdListIndexes,
		"dropIndexes":              cmdDropIndexes,
		"deleteIndexes":            cmdDropIndexes,
		"shardCollection":          cmdShardCollection,
		"customAction":             cmdCustomAction,
		"collStats":                cmdCollStats,
		"collstats":                cmdCollStats,
		"dbStats":                  cmdDBStats,
		"dbstats":                  cmdDBStats,
		"dataSize":                 cmdDataSize,
		"datasize":                 cmdDataSize,
		"validate":                 cmdValidate,
		"compact":                  cmdCompact,
		"renameCollection":         cmdRenameCollection,
		"usersInfo":                cmdUsersInfo,
		"dropUser":                 cmdDropUser,
		"dropAllUsersFromDatabase": cmdDropAllUsersFromDatabase,
		"createUser":               cmdUserNotSupported,
		"updateUser":               cmdUserNotSupported,
		"grantRolesToUser":         cmdUserNotSupported,
		"revokeRolesFromUser":      cmdUserNotSupported,
		"explain":                  cmdExplain,
		"saslStart":                cmdSASL,
		"saslContinue":             cmdSASL,
		"commitTransaction":        cmdCommitTransaction,
		"abortTransaction":         cmdAbortTransaction,
	}
}

// dispatch runs an OP_MSG command.
func (c *conn) dispatch(raw bson.Raw) bson.D {
	elems, err := raw.Elements()
	if err != nil || len(elems) == 0 {
		return errorReply(newErr(9, "FailedToParse", "the command document is empty or invalid"))
	}
	name := elems[0].Key()
	var cmd bson.D
	if err := bson.Unmarshal(raw, &cmd); err != nil {
		return errorReply(newErr(9, "FailedToParse", "cannot decode the command: %v", err))
	}
	db, _ := raw.Lookup("$db").StringValueOK()
	r := &request{c: c, s: c.s, name: name, db: db, raw: raw, cmd: cmd}
	return r.run()
}

// runQuery answers a legacy OP_QUERY: only the handshake commands on
// *.$cmd.
func (c *conn) runQuery(ns string, raw bson.Raw) bson.D {
	db, coll, _ := strings.Cut(ns, ".")
	if coll != "$cmd" {
		return errorReply(newErr(352, "UnsupportedOpQueryCommand", "OP_QUERY is only supported for the handshake on *.$cmd, not %q", ns))
	}
	elems, err := raw.Elements()
	if err != nil || len(elems) == 0 {
		return errorReply(newErr(9, "FailedToParse", "the query document is empty"))
	}
	name := elems[0].Key()
	if name == "$query" || name == "query" {
		// A wrapped query: {$query: {...}, $readPreference: ...}.
		if inner, ok := elems[0].Value().DocumentOK(); ok {
			raw = inner
			if elems, err = raw.Elements(); err != nil || len(elems) == 0 {
				return errorReply(newErr(9, "FailedToParse", "the query document is empty"))
			}
			name = elems[0].Key()
		}
	}
	switch name {
	case "hello", "isMaster", "ismaster", "saslStart", "saslContinue":
	default:
		return errorReply(newErr(352, "UnsupportedOpQueryCommand", "OP_QUERY is only supported for hello, isMaster, saslStart and saslContinue, not %q; use OP_MSG", name))
	}
	var cmd bson.D
	if err := bson.Unmarshal(raw, &cmd); err != nil {
		return errorReply(newErr(9, "FailedToParse", "cannot decode the command: %v", err))
	}
	r := &request{c: c, s: c.s, name: name, db: db, raw: raw, cmd: cmd}
	return r.run()
}

func (r *request) run() bson.D {
	h, ok := commands[r.name]
	if !ok {
		return errorReply(newErr(59, "CommandNotFound", "no such command: '%s'", r.name))
	}
	if r.db == "" {
		return errorReply(newErr(40571, "Location40571", "OP_MSG requests require a $db argument"))
	}
	limit, err := r.parseMaxTimeMS()
	if err != nil {
		return errorReply(toCmdError(err))
	}
	r.limit = limit
	ta, err := r.txnFields()
	if err != nil {
		return errorReply(toCmdError(err))
	}
	if err := r.authorize(); err != nil {
		return errorReply(toCmdError(err))
	}
	defer r.release()
	if err := r.checkFields(); err != nil {
		return errorReply(toCmdError(err))
	}
	var out bson.D
	if ta.active {
		out, err = r.runInTxn(ta, h)
	} else {
		out, err = h(r)
	}
	if err != nil {
		return errorReply(toCmdError(err))
	}
	if r.lsid() != "" {
		// A causally consistent session's next read carries it back as
		// afterClusterTime (consistency.go).
		out = append(out, bson.E{Key: "operationTime", Value: r.s.opTimes.next(r.s.cfg.Now())})
	}
	return append(out, bson.E{Key: "ok", Value: 1.0})
}

// Field accessors of the decoded command.

func (r *request) get(key string) (any, bool) {
	for _, e := range r.cmd {
		if e.Key == key {
			return e.Value, true
		}
	}
	return nil, false
}

func (r *request) str(key string) (string, error) {
	v, ok := r.get(key)
	if !ok {
		return "", nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", typeMismatch("BSON field '%s.%s' is the wrong type '%s', expected type 'string'", r.name, key, typeName(v))
	}
	return s, nil
}

// collName is the command's first field: the collection it is about.
func (r *request) collName() (string, error) {
	s, ok := r.cmd[0].Value.(string)
	if !ok {
		// IDL parsers (IDLParserContext::parseNSCollectionRequired) answer
		// 2; commands parsed by hand (CommandHelpers) 73.
		code, name := int32(2), "BadValue"
		if handParsedNamespace[r.name] {
			code, name = 73, "InvalidNamespace"
		}
		return "", newErr(code, name, "collection name has invalid type %s", typeName(r.cmd[0].Value))
	}
	if s == "" {
		return "", newErr(73, "InvalidNamespace", "Invalid namespace specified '%s.'", r.db)
	}
	return s, nil
}

func (r *request) doc(key string) (bson.D, error) {
	v, ok := r.get(key)
	if !ok || v == nil {
		return nil, nil
	}
	d, isDoc := v.(bson.D)
	if !isDoc {
		return nil, typeMismatch("BSON field '%s.%s' is the wrong type '%s', expected type 'object'", r.name, key, typeName(v))
	}
	return d, nil
}

func (r *request) boolean(key string) bool {
	v, _ := r.get(key)
	return truthy(v)
}

func truthy(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case int32:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case nil:
		return false
	}
	return true
}

// integer reads a numeric field (absent: def).
func (r *request) integer(key string, def int64) (int64, error) {
	v, ok := r.get(key)
	if !ok || v == nil {
		return def, nil
	}
	n, ok := asInt(v)
	if !ok {
		return 0, typeMismatch("BSON field '%s.%s' is the wrong type '%s', expected a number", r.name, key, typeName(v))
	}
	return n, nil
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

func docs(v any) ([]bson.D, bool) {
	a, ok := v.(bson.A)
	if !ok {
		return nil, false
	}
	out := make([]bson.D, 0, len(a))
	for _, x := range a {
		d, ok := x.(bson.D)
		if !ok {
			return nil, false
		}
		out = append(out, d)
	}
	return out, true
}

// Server version the handshake and buildInfo advertise (wire version 21 is
// MongoDB 7.0).
const (
	serverVersion  = "7.0.0"
	maxWireVersion = 21
)

func cmdHello(r *request) (bson.D, error) {
	primary := "isWritablePrimary"
	if r.name != "hello" {
		primary = "ismaster"
	}
	out := bson.D{{Key: primary, Value: true}}
	if r.boolean("helloOk") {
		out = append(out, bson.E{Key: "helloOk", Value: true})
	}
	if mechs, ok := r.saslSupportedMechs(); ok {
		out = append(out, bson.E{Key: "saslSupportedMechs", Value: mechs})
	}
	if first, ok := r.speculativeAuth(); ok {
		out = append(out, bson.E{Key: "speculativeAuthenticate", Value: first})
	}
	out = append(out,
		bson.E{Key: "maxBsonObjectSize", Value: int32(MaxDocumentBytes)},
		bson.E{Key: "maxMessageSizeBytes", Value: int32(MaxMessageBytes)},
		bson.E{Key: "maxWriteBatchSize", Value: int32(maxWriteBatch)},
		bson.E{Key: "localTime", Value: bson.NewDateTimeFromTime(r.s.cfg.Now())},
		bson.E{Key: "logicalSessionTimeoutMinutes", Value: int32(30)},
		bson.E{Key: "connectionId", Value: r.c.id},
		bson.E{Key: "minWireVersion", Value: int32(0)},
		bson.E{Key: "maxWireVersion", Value: int32(maxWireVersion)},
		bson.E{Key: "readOnly", Value: false},
	)
	return out, nil
}

func cmdBuildInfo(r *request) (bson.D, error) {
	return bson.D{
		{Key: "version", Value: serverVersion},
		{Key: "gitVersion", Value: "parsec"},
		{Key: "modules", Value: bson.A{}},
		{Key: "sysInfo", Value: "deprecated"},
		{Key: "versionArray", Value: bson.A{int32(7), int32(0), int32(0), int32(0)}},
		{Key: "bits", Value: int32(64)},
		{Key: "debug", Value: false},
		{Key: "maxBsonObjectSize", Value: int32(MaxDocumentBytes)},
		{Key: "storageEngines", Value: bson.A{"parsec"}},
		{Key: "javascriptEngine", Value: "none"},
		{Key: "allocator", Value: "go"},
		{Key: "buildEnvironment", Value: bson.D{
			{Key: "distmod", Value: ""},
			{Key: "distarch", Value: runtime.GOARCH},
			{Key: "cc", Value: runtime.Compiler + " " + runtime.Version()},
			{Key: "ccflags", Value: ""},
			{Key: "cxx", Value: ""},
			{Key: "cxxflags", Value: ""},
			{Key: "linkflags", Value: ""},
			{Key: "target_arch", Value: runtime.GOARCH},
			{Key: "target_os", Value: runtime.GOOS},
		}},
	}, nil
}

func cmdGetParameter(r *request) (bson.D, error) {
	out := bson.D{}
	if _, ok := r.get("featureCompatibilityVersion"); ok || r.cmd[0].Value == "*" {
		out = append(out, bson.E{Key: "featureCompatibilityVersion", Value: bson.D{{Key: "version", Value: "7.0"}}})
	}
	return out, nil
}

func cmdGetLog(r *request) (bson.D, error) {
	v := r.cmd[0].Value
	if v == "*" {
		return bson.D{{Key: "names", Value: bson.A{"global", "startupWarnings"}}}, nil
	}
	return bson.D{{Key: "totalLinesWritten", Value: int32(0)}, {Key: "log", Value: bson.A{}}}, nil
}

func cmdWhatsMyURI(r *request) (bson.D, error) {
	return bson.D{{Key: "you", Value: r.c.remote}}, nil
}

func cmdConnectionStatus(r *request) (bson.D, error) {
	return bson.D{{Key: "authInfo", Value: bson.D{
		{Key: "authenticatedUsers", Value: bson.A{}},
		{Key: "authenticatedUserRoles", Value: bson.A{}},
	}}}, nil
}

func cmdHostInfo(r *request) (bson.D, error) {
	host, _ := os.Hostname()
	return bson.D{
		{Key: "system", Value: bson.D{
			{Key: "currentTime", Value: bson.NewDateTimeFromTime(r.s.cfg.Now())},
			{Key: "hostname", Value: host},
			{Key: "numCores", Value: int32(runtime.NumCPU())},
			{Key: "cpuArch", Value: runtime.GOARCH},
		}},
		{Key: "os", Value: bson.D{{Key: "type", Value: runtime.GOOS}}},
		{Key: "extra", Value: bson.D{}},
	}, nil
}

func cmdServerStatus(r *request) (bson.D, error) {
	host, _ := os.Hostname()
	up := r.s.cfg.Now().Sub(r.s.started)
	r.s.mu.Lock()
	open := r.s.open
	r.s.mu.Unlock()
	return bson.D{
		{Key: "host", Value: host},
		{Key: "version", Value: serverVersion},
		{Key: "process", Value: "parsec"},
		{Key: "pid", Value: int64(os.Getpid())},
		{Key: "uptime", Value: up.Seconds()},
		{Key: "uptimeMillis", Value: up.Milliseconds()},
		{Key: "localTime", Value: bson.NewDateTimeFromTime(r.s.cfg.Now())},
		{Key: "connections", Value: bson.D{
			{Key: "current", Value: int32(open)},
			{Key: "available", Value: int32(r.s.cfg.MaxConnections - open)},
		}},
		{Key: "metrics", Value: bson.D{{Key: "cursor", Value: bson.D{{Key: "open", Value: bson.D{{Key: "total", Value: int64(r.s.cursors.len())}}}}}}},
	}, nil
}

func cmdListCommands(r *request) (bson.D, error) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	cmds := bson.D{}
	for _, n := range names {
		cmds = append(cmds, bson.E{Key: n, Value: bson.D{{Key: "help", Value: ""}}})
	}
	return bson.D{{Key: "commands", Value: cmds}}, nil
}

func cmdGetCmdLineOpts(r *request) (bson.D, error) {
	return bson.D{{Key: "argv", Value: bson.A{"parsec"}}, {Key: "parsed", Value: bson.D{}}}, nil
}

// cursorReply is a find/aggregate/getMore reply.
func cursorReply(id int64, ns, field string, batch bson.A) bson.D {
	return bson.D{{Key: "cursor", Value: bson.D{
		{Key: field, Value: batch},
		{Key: "id", Value: id},
		{Key: "ns", Value: ns},
	}}}
}

// firstBatch reads the first batch of cur and registers it as an open
// cursor if it has more.
func (r *request) firstBatch(cur *cursor, batchSize int64, single bool) (bson.D, error) {
	cur.owner = r.c.principal()
	cur.limit = r.limit
	n := int(batchSize)
	if batchSize < 0 {
		return nil, negativeField("batchSize", batchSize)
	}
	if batchSize == 0 && !single {
		// An empty first batch with a live cursor.
		if err := r.s.cursors.add(cur); err != nil {
			return nil, err
		}
		if cur.limit != nil {
			cur.leftover = cur.limit.left()
		}
		return cursorReply(cur.id, cur.ns, "firstBatch", bson.A{}), nil
	}
	batch, done, err := cur.batch(n)
	if err != nil {
		return nil, err
	}
	if done || single {
		return cursorReply(0, cur.ns, "firstBatch", batch), nil
	}
	if err := r.s.cursors.add(cur); err != nil {
		return nil, err
	}
	if cur.limit != nil {
		cur.leftover = cur.limit.left()
	}
	return cursorReply(cur.id, cur.ns, "firstBatch", batch), nil
}

func cmdGetMore(r *request) (bson.D, error) {
	id, ok := r.cmd[0].Value.(int64)
	if !ok {
		return nil, wrongType("getMore", "getMore", r.cmd[0].Value, "long")
	}
	if _, ok := r.get("collection"); !ok {
		return nil, missingField("getMore", "collection")
	}
	collName, err := r.str("collection")
	if err != nil {
		return nil, err
	}
	n, err := r.integer("batchSize", 0)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, negativeField("batchSize", n)
	}
	who := r.c.principal()
	cur, err := r.s.cursors.get(id, who)
	if err != nil {
		return nil, err
	}
	if want := r.db + "." + collName; cur.ns != want && !strings.HasSuffix(cur.ns, ".$cmd.listCollections") {
		return nil, newErr(13, "Unauthorized", "Requested getMore on namespace '%s', but cursor belongs to a different namespace %s", want, cur.ns)
	}
	if r.limit != nil {
		// Parsec's cursors are never tailable: mongod refuses this for
		// every cursor that is not awaitData.
		return nil, badValue("cannot set maxTimeMS on getMore command for a non-awaitData cursor")
	}
	cur.mu.Lock()
	defer cur.mu.Unlock()
	if cur.limit != nil {
		// The time the cursor's command had left is spent over its
		// getMores.
		cur.limit.deadline = r.s.cfg.Now().Add(cur.leftover)
	}
	err = cur.src.refresh()
	var batch bson.A
	var done bool
	if err == nil {
		batch, done, err = cur.batch(int(n))
	}
	if cur.limit != nil {
		cur.leftover = cur.limit.left()
	}
	if err != nil {
		r.s.cursors.remove(id, who)
		return nil, err
	}
	if done {
		r.s.cursors.remove(id, who)
		id = 0
	} else if err := r.s.cursors.recharge(cur); err != nil {
		return nil, err
	}
	return cursorReply(id, cur.ns, "nextBatch", batch), nil
}

func cmdKillCursors(r *request) (bson.D, error) {
	v, present := r.get("cursors")
	ids, ok := v.(bson.A)
	if !present {
		return nil, missingField("killCursors", "cursors")
	}
	if !ok {
		return nil, wrongType("killCursors", "cursors", v, "array")
	}
	killed, notFound := bson.A{}, bson.A{}
	for i, x := range ids {
		if _, ok := x.(int64); !ok {
			return nil, typeMismatch("BSON field 'killCursors.cursors.%d' is the wrong type '%s', expected type 'long'", i, typeName(x))
		}
	}
	for _, x := range ids {
		id := x.(int64)
		if r.s.cursors.remove(id, r.c.principal()) {
			killed = append(killed, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	return bson.D{{Key: "cursorsKilled", Value: killed}, {Key: "cursorsNotFound", Value: notFound},
		{Key: "cursorsAlive", Value: bson.A{}}, {Key: "cursorsUnknown", Value: bson.A{}}}, nil
}
