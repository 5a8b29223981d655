package cosmos

import (
	"encoding/json"
	"net/http"

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
		s.writeFeed(req, "", "Offers", renderOffers(s.engine.Offers()))
	case opQueryOffers:
		// Any query over the offers' JSON, as the SDKs send them:
		// SELECT * FROM c WHERE c.offerResourceId = '...', and the older
		// SELECT * FROM root r WHERE r.resource = @link.
		return s.queryFeed(req, "", "Offers", renderOffers(s.engine.Offers()))
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

func renderOffers(offers []engine.Offer) []any {
	list := make([]any, len(offers))
	for i, o := range offers {
		list[i] = renderOffer(o)
	}
	return list
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
