package cosmos

import (
	"encoding/binary"
	"fmt"
	"net/http"
	"strconv"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// partitionKeyRanges serves the partition map, as a plain feed and as the
// incremental feed (A-IM) that the Go SDK polls until it gets 304.
func (s *Server) partitionKeyRanges(req *request, dbID, collID string) error {
	c, err := s.openContainer(req, dbID, collID)
	if err != nil {
		return err
	}
	req.charge = throughput.MetadataCharge
	info := c.Info()
	ranges, version := c.Ranges()
	etag := fmt.Sprintf("\"%d\"", version)
	req.w.Header().Set("etag", etag)
	if req.r.Header.Get("A-IM") != "" && req.r.Header.Get("If-None-Match") == etag {
		s.writeJSON(req, http.StatusNotModified, nil)
		return nil
	}
	rid, _ := engine.DecodeRid(info.Rid)
	db, err := s.engine.Database(dbID)
	if err != nil {
		return err
	}
	list := make([]any, len(ranges))
	for i, r := range ranges {
		n, _ := strconv.Atoi(r.ID)
		rrid := engine.EncodeRid(binary.BigEndian.AppendUint64(append([]byte(nil), rid...), uint64(n)+1))
		parents := r.Parents
		if parents == nil {
			parents = []string{}
		}
		list[i] = map[string]any{
			"_rid": rrid, "id": r.ID, "_etag": etag, "minInclusive": r.Min, "maxExclusive": r.Max,
			"ridPrefix": n, "_self": "dbs/" + db.Rid + "/colls/" + info.Rid + "/pkranges/" + rrid + "/",
			"throughputFraction": 1 / float64(len(ranges)), "status": "online", "parents": parents,
			"ownedArchivalPKRangeIds": []string{}, "_ts": info.Ts, "lsn": r.LSN,
		}
	}
	s.writeFeed(req, info.Rid, "PartitionKeyRanges", list)
	return nil
}
