package cosmos

import (
	"encoding/json"
	"net/http"
	"strings"
)

// queryEngineConfiguration is the hosted service's value; the SDKs do not
// read it, but some tools print it.
const queryEngineConfiguration = `{"maxSqlQueryInputLength":262144,"maxJoinsPerSqlQuery":5,"maxLogicalAndPerSqlQuery":500,"maxLogicalOrPerSqlQuery":500,"maxUdfRefPerSqlQuery":10,"maxInExpressionItemsCount":16000,"queryMaxInMemorySortDocumentCount":500,"maxQueryRequestTimeoutFraction":0.9,"sqlAllowNonFiniteNumbers":false,"sqlAllowAggregateFunctions":true,"sqlAllowSubQuery":true,"sqlAllowScalarSubQuery":true,"allowNewKeywords":true,"sqlAllowLike":true,"sqlAllowGroupByClause":true,"maxSpatialQueryCells":12,"spatialMaxGeometryPointCount":256,"sqlDisableOptimizationFlags":0,"sqlAllowTop":true,"enableSpatialIndexing":true}`

// endpoint is the URL clients must use to reach this server: the configured
// advertise URL, or the scheme and Host of the request.
func (s *Server) endpoint(r *http.Request) string {
	if s.cfg.Advertise != "" {
		return strings.TrimRight(s.cfg.Advertise, "/") + "/"
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/"
}

type location struct {
	Name     string `json:"name"`
	Endpoint string `json:"databaseAccountEndpoint"`
}

func (s *Server) getAccount(req *request) error {
	ep := s.endpoint(req.r)
	locs := []location{{Name: "Parsec", Endpoint: ep}}
	body, _ := json.Marshal(map[string]any{
		"_self":                              "",
		"id":                                 "parsec",
		"_rid":                               "parsec",
		"media":                              "//media/",
		"addresses":                          "//addresses/",
		"_dbs":                               "//dbs/",
		"writableLocations":                  locs,
		"readableLocations":                  locs,
		"enableMultipleWriteLocations":       false,
		"continuousBackupEnabled":            false,
		"enableNRegionSynchronousCommit":     false,
		"enablePerPartitionFailoverBehavior": false,
		"disableCrossRegionalHedging":        false,
		"userReplicationPolicy":              map[string]any{"asyncReplication": false, "minReplicaSetSize": 1, "maxReplicasetSize": 1},
		"userConsistencyPolicy":              s.cfg.Consistency.account(),
		"systemReplicationPolicy":            map[string]any{"minReplicaSetSize": 1, "maxReplicasetSize": 1},
		"readPolicy":                         map[string]any{"primaryReadCoefficient": 1, "secondaryReadCoefficient": 1},
		"queryEngineConfiguration":           queryEngineConfiguration,
	})
	h := req.w.Header()
	h.Set("x-ms-max-media-storage-usage-mb", "10240")
	h.Set("x-ms-media-storage-usage-mb", "0")
	h.Set("x-ms-databaseaccount-consumed-mb", "0")
	h.Set("x-ms-databaseaccount-reserved-mb", "0")
	h.Set("x-ms-databaseaccount-provisioned-mb", "0")
	h.Set("Content-Location", ep)
	s.writeJSON(req, http.StatusOK, body)
	return nil
}
