package cosmos

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/parsecdb/parsec/internal/engine"
	"net/http"
	"strconv"

	"github.com/parsecdb/parsec/internal/throughput"
)

// ClusterPath is GET /_cluster: the nodes of the cluster and where every
// physical partition's replicas are, which replica leads it and how far
// each has applied its log. It needs a master key. A server started
// without cluster options is a cluster of one node, id 1, which holds and
// leads every partition.
const ClusterPath = "/_cluster"

// ClusterStatus is the body of GET /_cluster.
type ClusterStatus struct {
	Nodes      []ClusterNode      `json:"nodes"`
	Partitions []ClusterPartition `json:"partitions"`
}

// ClusterNode is one node of the cluster.
type ClusterNode struct {
	ID uint64 `json:"id"`
	// Address is the endpoint clients use; ClusterAddress the one other
	// nodes use (empty on a single node).
	Address        string `json:"address"`
	ClusterAddress string `json:"clusterAddress"`
	Live           bool   `json:"live"`
	// PartitionsHeld and PartitionsLed count the partitions it has a
	// replica of, and leads.
	PartitionsHeld int `json:"partitionsHeld"`
	PartitionsLed  int `json:"partitionsLed"`
}

// ClusterPartition is one physical partition of a container.
type ClusterPartition struct {
	// Container is "database/container".
	Container    string `json:"container"`
	Range        string `json:"range"`
	MinInclusive string `json:"minInclusive"`
	MaxExclusive string `json:"maxExclusive"`
	// Replicas are the ids of the nodes holding it, Leader the one that
	// leads it (0 while it has none).
	Replicas []uint64 `json:"replicas"`
	Leader   uint64   `json:"leader"`
	// AppliedLSN is each replica's applied LSN, by node id.
	AppliedLSN map[string]uint64 `json:"appliedLsn"`
}

// singleNode is the id of the one node of a server without a cluster.
const singleNode = 1

func (s *Server) clusterStatus(req *request) error {
	req.charge = throughput.MetadataCharge
	if s.cfg.Cluster != nil {
		return s.clusterNodesStatus(req)
	}
	st := ClusterStatus{Nodes: []ClusterNode{{ID: singleNode, Address: s.endpoint(req.r), Live: true}}, Partitions: []ClusterPartition{}}
	id := strconv.FormatUint(singleNode, 10)
	for _, db := range s.engine.Databases() {
		colls, err := s.engine.Containers(db.ID)
		if err != nil {
			continue // deleted meanwhile
		}
		for _, ci := range colls {
			c, err := s.engine.Container(db.ID, ci.ID)
			if err != nil {
				continue
			}
			for _, p := range c.Partitions() {
				r := p.Range()
				st.Partitions = append(st.Partitions, ClusterPartition{Container: db.ID + "/" + ci.ID, Range: r.ID, MinInclusive: r.Min, MaxExclusive: r.Max,
					Replicas: []uint64{singleNode}, Leader: singleNode, AppliedLSN: map[string]uint64{id: p.LSN()}})
			}
		}
	}
	st.Nodes[0].PartitionsHeld = len(st.Partitions)
	st.Nodes[0].PartitionsLed = len(st.Partitions)
	body, _ := json.Marshal(st)
	s.writeJSON(req, http.StatusOK, body)
	return nil
}

// clusterNodesStatus is clusterStatus in a cluster: every member is asked
// for its replicas (one that does not answer within surveyWait is not
// live), and this node's raft state gives each partition's replicas and
// leader.
func (s *Server) clusterNodesStatus(req *request) error {
	n := s.cfg.Cluster
	ctx, cancel := context.WithTimeout(req.r.Context(), surveyWait)
	reports := n.Survey(ctx)
	cancel()
	st := ClusterStatus{Partitions: []ClusterPartition{}}
	byID := map[uint64]*ClusterNode{}
	for _, m := range n.Members() {
		r := reports[m.ID]
		st.Nodes = append(st.Nodes, ClusterNode{ID: m.ID, Address: m.Address, ClusterAddress: m.ClusterAddress, Live: r.Live,
			PartitionsHeld: len(r.LSN), PartitionsLed: len(r.Led)})
	}
	for i := range st.Nodes {
		byID[st.Nodes[i].ID] = &st.Nodes[i]
	}
	s.engine.EachContainer(func(db string, c *engine.Container) {
		for _, p := range c.Partitions() {
			r := p.Range()
			g := p.GroupID()
			cp := ClusterPartition{Container: db + "/" + c.Info().ID, Range: r.ID, MinInclusive: r.Min, MaxExclusive: r.Max,
				Replicas: []uint64{}, AppliedLSN: map[string]uint64{}}
			if lead, voters, err := n.Status(g); err == nil {
				cp.Leader, cp.Replicas = lead, voters
			} else {
				cp.Replicas = append(cp.Replicas, c.Info().Replicas...)
			}
			slices.Sort(cp.Replicas)
			for _, id := range cp.Replicas {
				if lsn, ok := reports[id].LSN[g]; ok {
					cp.AppliedLSN[strconv.FormatUint(id, 10)] = lsn
				}
			}
			st.Partitions = append(st.Partitions, cp)
		}
	})
	slices.SortFunc(st.Partitions, func(a, b ClusterPartition) int {
		return cmp.Or(strings.Compare(a.Container, b.Container), cmp.Compare(len(a.Range), len(b.Range)), strings.Compare(a.Range, b.Range))
	})
	body, _ := json.Marshal(st)
	s.writeJSON(req, http.StatusOK, body)
	return nil
}

// surveyWait bounds how long GET /_cluster waits for the members.
const surveyWait = 2 * time.Second
