package cosmos

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/parsecdb/parsec/internal/engine"
	"github.com/parsecdb/parsec/internal/throughput"
)

// offerResource is the _self link of the database or container an offer
// belongs to, the offer's "resource".
func offerResource(o engine.Offer) string {
	if o.Coll == "" {
		return "dbs/" + o.DBRid + "/"
	}
	return "dbs/" + o.DBRid + "/colls/" + o.ResourceRid + "/"
}

// renderOffer is an offer's JSON. Its id is lowercase (engine.Offer.ID),
// as it must be: clients sign offer links lowercased.
func renderOffer(o engine.Offer) map[string]any {
	content := map[string]any{"offerThroughput": o.Throughput, "offerIsRUPerMinuteThroughputEnabled": false}
	if o.AutoscaleMax > 0 {
		content["offerThroughput"] = o.AutoscaleMax / 10
		content["offerAutopilotSettings"] = map[string]any{"maxThroughput": o.AutoscaleMax,
			"autoUpgradePolicy": map[string]any{"throughputPolicy": map[string]any{"incrementPercent": 0}}}
	}
	return map[string]any{
		"id": o.ID, "_rid": o.ID, "_self": "offers/" + o.ID + "/", "_etag": o.Etag(), "_ts": o.Ts,
		"offerVersion": "V2", "offerType": "Invalid", "resource": offerResource(o), "offerResourceId": o.ResourceRid,
		"content": content,
	}
}

// offers serves /offers and /offers/{id}: the provisioned throughput of
// databases and containers, as ReadThroughput and ReplaceThroughput use it.
// It runs the operation op (see classify).
func (s *Server) offers(req *request, op operation) error {
	req.charge = throughput.MetadataCharge
	switch op.kind {
	case opListOffers:
		s.writeOffers(req, s.engine.Offers())
	case opQueryOffers:
		body, err := readBody(req)
		if err != nil {
			return err
		}
		match, err := offerFilter(body)
		if err != nil {
			return err
		}
		var out []engine.Offer
		for _, o := range s.engine.Offers() {
			if match(o) {
				out = append(out, o)
			}
		}
		s.writeOffers(req, out)
	case opReadOffer:
		o, err := s.engine.Offer(op.id)
		if err != nil {
			return err
		}
		s.writeOffer(req, o)
	case opReplaceOffer:
		body, err := readBody(req)
		if err != nil {
			return err
		}
		var in struct {
			Content struct {
				OfferThroughput int `json:"offerThroughput"`
				Autopilot       *struct {
					MaxThroughput int `json:"maxThroughput"`
				} `json:"offerAutopilotSettings"`
			} `json:"content"`
		}
		if err := decodeStrict(body, &in); err != nil {
			return err
		}
		t := engine.Throughput{RUs: in.Content.OfferThroughput}
		if a := in.Content.Autopilot; a != nil && a.MaxThroughput > 0 {
			t = engine.Throughput{AutoscaleMax: a.MaxThroughput}
		}
		if t.RUs == 0 && t.AutoscaleMax == 0 {
			return errBadRequest("the offer must give content.offerThroughput or content.offerAutopilotSettings.maxThroughput")
		}
		o, err := s.engine.ReplaceOffer(op.id, t)
		if err != nil {
			return err
		}
		s.writeOffer(req, o)
	default:
		panic("BUG: offers called for " + op.kind.String())
	}
	return nil
}

func (s *Server) writeOffer(req *request, o engine.Offer) {
	h := req.w.Header()
	h.Set("x-ms-offer-replace-pending", "false")
	h.Set("x-ms-cosmos-min-throughput", itoa(o.MinThroughput))
	s.writeResource(req, http.StatusOK, o.Etag(), renderOffer(o))
}

func (s *Server) writeOffers(req *request, offers []engine.Offer) {
	list := make([]any, len(offers))
	for i, o := range offers {
		list[i] = renderOffer(o)
	}
	s.writeFeed(req, "", "Offers", list)
}

// offerQuery is the one query shape the SDKs send to /offers:
// SELECT * FROM c [WHERE c.<property> = <string or @parameter>].
var offerQuery = regexp.MustCompile(`(?is)^\s*SELECT\s+\*\s+FROM\s+(\w+)(?:\s+WHERE\s+(\w+)\.(\w+)\s*=\s*(?:'([^']*)'|"([^"]*)"|(@\w+)))?\s*$`)

// offerFilter returns the filter of an offers query.
func offerFilter(body []byte) (func(engine.Offer) bool, error) {
	var q struct {
		Query      string `json:"query"`
		Parameters []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"parameters"`
	}
	if err := decodeStrict(body, &q); err != nil {
		return nil, err
	}
	m := offerQuery.FindStringSubmatch(q.Query)
	if m == nil {
		return nil, errBadRequest("offers accept only queries of the form SELECT * FROM c [WHERE c.<property> = 'value'], not %q", q.Query)
	}
	if m[2] == "" {
		return func(engine.Offer) bool { return true }, nil
	}
	if !strings.EqualFold(m[1], m[2]) {
		return nil, errBadRequest("the query refers to %q, but its collection alias is %q", m[2], m[1])
	}
	value := m[4] + m[5]
	if m[6] != "" {
		found := false
		for _, p := range q.Parameters {
			if p.Name == m[6] {
				v, ok := p.Value.(string)
				if !ok {
					return nil, errBadRequest("parameter %s must be a string", m[6])
				}
				value, found = v, true
			}
		}
		if !found {
			return nil, errBadRequest("the query uses %s, but no such parameter was given", m[6])
		}
	}
	switch m[3] {
	case "offerResourceId":
		return func(o engine.Offer) bool { return o.ResourceRid == value }, nil
	case "resource":
		return func(o engine.Offer) bool { return offerResource(o) == value }, nil
	case "id", "_rid":
		return func(o engine.Offer) bool { return strings.EqualFold(o.ID, value) }, nil
	}
	return nil, errBadRequest("offers can be filtered by offerResourceId, resource or id, not %q", m[3])
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
