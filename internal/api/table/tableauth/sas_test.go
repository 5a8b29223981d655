package tableauth

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
)

var (
	t0     = time.Date(2026, 11, 28, 19, 0, 0, 0, time.UTC)
	start  = t0.Add(-time.Hour)
	expiry = t0.Add(time.Hour)
)

func clockAt(t time.Time) Verifier { return Verifier{Now: func() time.Time { return t }} }

func devCred(t *testing.T) *aztables.SharedKeyCredential {
	t.Helper()
	cred, err := aztables.NewSharedKeyCredential("devstoreaccount1", devKey)
	if err != nil {
		t.Fatal(err)
	}
	return cred
}

// sasQuery returns the query string of a SAS URL that aztables made.
func sasQuery(t *testing.T, sasURL string) string {
	t.Helper()
	u, err := url.Parse(sasURL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Get("sig") == "" {
		t.Fatalf("no signature in %q", sasURL)
	}
	return u.RawQuery
}

// request is a request to the path-style emulator URL path with the SAS
// query; scheme https marks it as having come over TLS.
func request(method, scheme, path, query string) *http.Request {
	r := httptest.NewRequest(method, scheme+"://127.0.0.1:10002/devstoreaccount1/"+path+"?"+query, nil)
	r.RemoteAddr = "192.0.2.10:5555"
	return r
}

func tableSAS(t *testing.T, perms aztables.SASPermissions) string {
	t.Helper()
	c, err := aztables.NewClientWithSharedKey("http://127.0.0.1:10002/devstoreaccount1/mytable", devCred(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.GetTableSASURL(perms, start, expiry)
	if err != nil {
		t.Fatal(err)
	}
	return sasQuery(t, u)
}

// TestServiceSASFromGoSDK verifies table signatures made by aztables
// v1.4.1 Client.GetTableSASURL and checks what they permit.
func TestServiceSASFromGoSDK(t *testing.T) {
	keys := testKeys(t)
	q := tableSAS(t, aztables.SASPermissions{Read: true, Add: true})
	v := clockAt(t0)
	r := request("GET", "http", "mytable(PartitionKey='p',RowKey='r')", q)
	g, err := v.Verify(r, "devstoreaccount1", keys)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if g.Scheme != ServiceSAS || g.Key != "primary" || g.Table != "mytable" || g.Permissions != "ra" || !g.Range.IsZero() || !g.Expiry.Equal(expiry) {
		t.Fatalf("grant %+v", g)
	}
	if err := g.AllowEntity(QueryEntities, "mytable", "p", "r"); err != nil {
		t.Error(err)
	}
	if err := g.AllowEntity(InsertEntity, "MyTable", "p", "r"); err != nil {
		t.Errorf("table names compare without case: %v", err)
	}
	wantErr(t, g.AllowEntity(DeleteEntity, "mytable", "p", "r"), ErrPermission, CodeAuthorizationPermissionMismatch)
	wantErr(t, g.Allow(UpdateEntity, "mytable"), ErrPermission, CodeAuthorizationPermissionMismatch)
	// Upserts need a and u (learn.microsoft.com/rest/api/storageservices/create-service-sas).
	wantErr(t, g.Allow(UpsertEntity, "mytable"), ErrPermission, CodeAuthorizationPermissionMismatch)
	wantErr(t, g.Allow(QueryEntities, "othertable"), ErrTable, CodeAuthorizationFailure)
	wantErr(t, g.Allow(CreateTable, ""), ErrPermission, CodeAuthorizationPermissionMismatch)
	wantErr(t, g.Allow(GetTableACL, "mytable"), ErrPermission, CodeAuthorizationPermissionMismatch)

	// Time window.
	_, err = clockAt(expiry.Add(time.Second)).Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrExpired, CodeAuthenticationFailed)
	_, err = clockAt(start.Add(-time.Second)).Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrNotYetValid, CodeAuthenticationFailed)
	if _, err := clockAt(expiry).Verify(r, "devstoreaccount1", keys); err != nil {
		t.Errorf("at the expiry instant: %v", err)
	}

	// Tampering: more permissions, another table, another key, another account.
	for name, tamper := range map[string]func(url.Values){
		"sp": func(q url.Values) { q.Set("sp", "raud") },
		"tn": func(q url.Values) { q.Set("tn", "othertable") },
		"se": func(q url.Values) { q.Set("se", expiry.Add(time.Hour).Format("2006-01-02T15:04:05Z")) },
	} {
		qv, _ := url.ParseQuery(q)
		tamper(qv)
		_, err := v.Verify(request("GET", "http", "mytable()", qv.Encode()), "devstoreaccount1", keys)
		if !errors.Is(err, ErrSignatureMismatch) {
			t.Errorf("%s tampered: %v", name, err)
		}
	}
	_, err = v.Verify(r, "devstoreaccount1", keys[1:])
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
	_, err = v.Verify(r, "otheraccount", keys)
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
}

// TestServiceSASKeyRange: aztables v1.4.1 signs spk/srk/epk/erk but leaves
// them out of the URL it returns (SASSignatureValues.Sign in sas_service.go
// never copies them into SASQueryParameters), so its ranged SAS URLs fail
// on the real service too: the service signs the parameters it receives.
// With the signed bounds added to the query, as the service documents
// them, the signature verifies and the range holds.
func TestServiceSASKeyRange(t *testing.T) {
	keys := testKeys(t)
	perms := aztables.SASPermissions{Read: true, Update: true, StartPartitionKey: "p1", StartRowKey: "r5", EndPartitionKey: "p3", EndRowKey: "r2"}
	q := tableSAS(t, perms)
	qv, _ := url.ParseQuery(q)
	if qv.Has("spk") || qv.Has("epk") {
		t.Fatalf("aztables now sends the range (%q); make this test check it as sent", q)
	}
	v := clockAt(t0)
	_, err := v.Verify(request("GET", "http", "mytable()", q), "devstoreaccount1", keys)
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)

	qv.Set("spk", "p1")
	qv.Set("srk", "r5")
	qv.Set("epk", "p3")
	qv.Set("erk", "r2")
	g, err := v.Verify(request("GET", "http", "mytable()", qv.Encode()), "devstoreaccount1", keys)
	if err != nil {
		t.Fatalf("Verify with the signed range: %v", err)
	}
	if g.Range != (KeyRange{"p1", "r5", "p3", "r2"}) {
		t.Fatalf("range %+v", g.Range)
	}
	for _, c := range []struct {
		pk, rk string
		in     bool
	}{
		{"p1", "r5", true}, {"p1", "r9", true}, {"p1", "r4", false}, {"p0", "z", false},
		{"p2", "", true}, {"p2", "a", true}, {"p3", "r2", true}, {"p3", "r1", true}, {"p3", "r3", false},
		{"p4", "a", false}, {"p1", "r50", true},
	} {
		err := g.AllowEntity(UpdateEntity, "mytable", c.pk, c.rk)
		if c.in && err != nil {
			t.Errorf("(%s,%s): %v", c.pk, c.rk, err)
		}
		if !c.in {
			wantErr(t, err, ErrOutsideRange, CodeAuthorizationFailure)
		}
	}
	// Changing a bound breaks the signature.
	qv.Set("epk", "p9")
	_, err = v.Verify(request("GET", "http", "mytable()", qv.Encode()), "devstoreaccount1", keys)
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
}

func TestKeyRangeOpenEnds(t *testing.T) {
	for _, c := range []struct {
		r      KeyRange
		pk, rk string
		in     bool
	}{
		{KeyRange{}, "any", "thing", true},
		{KeyRange{StartPK: "b"}, "a", "z", false},
		{KeyRange{StartPK: "b"}, "b", "", true},
		{KeyRange{EndPK: "b"}, "b", "zzz", true},
		{KeyRange{EndPK: "b"}, "ba", "", false},
		{KeyRange{EndPK: "b", EndRK: "m"}, "b", "n", false},
		{KeyRange{StartPK: "a", EndPK: "a"}, "a", "x", true},
		// Ordinal comparison: upper case sorts before lower case, and
		// "é" (U+00E9) after "z".
		{KeyRange{StartPK: "a"}, "Z", "", false},
		{KeyRange{EndPK: "z"}, "é", "", false},
	} {
		if got := c.r.Contains(c.pk, c.rk); got != c.in {
			t.Errorf("%+v contains (%q,%q) = %v", c.r, c.pk, c.rk, got)
		}
	}
}

// TestServiceSASConditions signs with aztables SASSignatureValues.Sign,
// which carries sip, spr and si as the SDK sends them.
func TestServiceSASConditions(t *testing.T) {
	keys := testKeys(t)
	sign := func(v aztables.SASSignatureValues) string {
		v.TableName, v.Permissions, v.StartTime, v.ExpiryTime = "MyTable", "r", start, expiry
		q, err := v.Sign(devCred(t))
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	v := clockAt(t0)

	q := sign(aztables.SASSignatureValues{IPRange: aztables.IPRange{Start: net.ParseIP("192.0.2.1"), End: net.ParseIP("192.0.2.20")}})
	r := request("GET", "http", "MyTable()", q)
	if _, err := v.Verify(r, "devstoreaccount1", keys); err != nil {
		t.Fatalf("inside the IP range: %v", err)
	}
	r.RemoteAddr = "192.0.2.21:1"
	_, err := v.Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrSourceIP, CodeAuthorizationSourceIPMismatch)
	r.RemoteAddr = "[2001:db8::1]:1"
	_, err = v.Verify(r, "devstoreaccount1", keys)
	wantErr(t, err, ErrSourceIP, CodeAuthorizationSourceIPMismatch)

	q = sign(aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPS})
	_, err = v.Verify(request("GET", "http", "MyTable()", q), "devstoreaccount1", keys)
	wantErr(t, err, ErrProtocol, CodeAuthorizationProtocolMismatch)
	if _, err := v.Verify(request("GET", "https", "MyTable()", q), "devstoreaccount1", keys); err != nil {
		t.Errorf("https only, over https: %v", err)
	}
	q = sign(aztables.SASSignatureValues{Protocol: aztables.SASProtocolHTTPSandHTTP})
	if _, err := v.Verify(request("GET", "http", "MyTable()", q), "devstoreaccount1", keys); err != nil {
		t.Errorf("https,http over http: %v", err)
	}

	q = sign(aztables.SASSignatureValues{Identifier: "policy1"})
	_, err = v.Verify(request("GET", "http", "MyTable()", q), "devstoreaccount1", keys)
	wantErr(t, err, ErrStoredPolicy, CodeAuthenticationFailed)

	// Signed with the read-only key: reads only, whatever sp says.
	roCred, _ := aztables.NewSharedKeyCredential("devstoreaccount1", roKey)
	qs, err := aztables.SASSignatureValues{TableName: "MyTable", Permissions: "raud", ExpiryTime: expiry}.Sign(roCred)
	if err != nil {
		t.Fatal(err)
	}
	g, err := v.Verify(request("GET", "http", "MyTable()", qs), "devstoreaccount1", keys)
	if err != nil || !g.ReadOnly || g.Key != "readonly" {
		t.Fatalf("read-only key SAS: %+v %v", g, err)
	}
	if err := g.Allow(QueryEntities, "mytable"); err != nil {
		t.Error(err)
	}
	wantErr(t, g.Allow(InsertEntity, "mytable"), ErrPermission, CodeAuthorizationPermissionMismatch)
}

// TestAccountSASFromGoSDK verifies account signatures from aztables
// v1.4.1 ServiceClient.GetAccountSASURL, which always signs spr=https.
func TestAccountSASFromGoSDK(t *testing.T) {
	keys := testKeys(t)
	svc, err := aztables.NewServiceClientWithSharedKey("https://127.0.0.1:10002/devstoreaccount1", devCred(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.GetAccountSASURL(aztables.AccountSASResourceTypes{Container: true, Object: true},
		aztables.AccountSASPermissions{Read: true, List: true, Add: true, Create: true}, start, expiry)
	if err != nil {
		t.Fatal(err)
	}
	q := sasQuery(t, u)
	v := clockAt(t0)
	g, err := v.Verify(request("GET", "https", "Tables", q), "devstoreaccount1", keys)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if g.Scheme != AccountSAS || g.ResourceTypes != "co" || g.Permissions != "rlac" {
		t.Fatalf("grant %+v", g)
	}
	for _, a := range []Action{QueryTables, CreateTable, QueryEntities, InsertEntity} {
		if err := g.Allow(a, "t"); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	wantErr(t, g.Allow(DeleteEntity, "t"), ErrPermission, CodeAuthorizationPermissionMismatch)
	wantErr(t, g.Allow(DeleteTable, "t"), ErrPermission, CodeAuthorizationPermissionMismatch)
	wantErr(t, g.Allow(GetServiceProperties, ""), ErrResourceType, CodeAuthorizationResourceTypeMismatch)
	wantErr(t, g.Allow(SetTableACL, "t"), ErrPermission, CodeAuthorizationPermissionMismatch)
	if err := g.AllowEntity(InsertEntity, "t", "any", "key"); err != nil {
		t.Errorf("an account SAS has no key range: %v", err)
	}

	_, err = v.Verify(request("GET", "http", "Tables", q), "devstoreaccount1", keys)
	wantErr(t, err, ErrProtocol, CodeAuthorizationProtocolMismatch)
	_, err = clockAt(expiry.Add(time.Minute)).Verify(request("GET", "https", "Tables", q), "devstoreaccount1", keys)
	wantErr(t, err, ErrExpired, CodeAuthenticationFailed)
	qv, _ := url.ParseQuery(q)
	qv.Set("sp", "rwdlacup")
	_, err = v.Verify(request("GET", "https", "Tables", qv.Encode()), "devstoreaccount1", keys)
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)

	// A signature for the blob service only, and one for the service level only.
	p, err := aztables.AccountSASSignatureValues{Services: "b", ResourceTypes: "sco", Permissions: "r", ExpiryTime: expiry}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = v.Verify(request("GET", "http", "Tables", p.Encode()), "devstoreaccount1", keys)
	wantErr(t, err, ErrService, CodeAuthorizationServiceMismatch)
	p, err = aztables.AccountSASSignatureValues{Services: "t", ResourceTypes: "s", Permissions: "rw", ExpiryTime: expiry}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	g, err = v.Verify(request("GET", "http", "", p.Encode()), "devstoreaccount1", keys)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Allow(SetServiceProperties, ""); err != nil {
		t.Error(err)
	}
	wantErr(t, g.Allow(QueryEntities, "t"), ErrResourceType, CodeAuthorizationResourceTypeMismatch)
}

// TestAccountSASVersion20201206: from that version the string to sign
// carries the encryption scope (Azurite IAccountSASSignatureValues.ts
// generateAccountSASSignature20201206), so the same fields signed the old
// way do not verify.
func TestAccountSASVersion20201206(t *testing.T) {
	keys := testKeys(t)
	oldStyle, err := aztables.AccountSASSignatureValues{Version: "2020-12-06", Services: "t", ResourceTypes: "o", Permissions: "r", ExpiryTime: expiry}.Sign(devCred(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = clockAt(t0).Verify(request("GET", "http", "t()", oldStyle.Encode()), "devstoreaccount1", keys)
	wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
	if !strings.Contains(err.Error(), `\n2020-12-06\n\n`) {
		t.Errorf("string to sign lacks the empty encryption scope: %v", err)
	}
}

func TestMalformedSAS(t *testing.T) {
	keys := testKeys(t)
	good := tableSAS(t, aztables.SASPermissions{Read: true})
	v := clockAt(t0)
	for name, tamper := range map[string]func(url.Values){
		"no version":       func(q url.Values) { q.Del("sv") },
		"sig not base64":   func(q url.Values) { q.Set("sig", "@@") },
		"bad expiry":       func(q url.Values) { q.Set("se", "tomorrow") },
		"no expiry":        func(q url.Values) { q.Del("se") },
		"bad permission":   func(q url.Values) { q.Set("sp", "rx") },
		"no table":         func(q url.Values) { q.Del("tn") },
		"srk without spk":  func(q url.Values) { q.Set("srk", "a") },
		"bad protocol":     func(q url.Values) { q.Set("spr", "ftp") },
		"bad ip":           func(q url.Values) { q.Set("sip", "300.1.1.1") },
		"reversed ip":      func(q url.Values) { q.Set("sip", "10.0.0.9-10.0.0.1") },
		"twice":            func(q url.Values) { q.Add("sp", "d") },
		"bad account perm": func(q url.Values) { q.Set("ss", "t"); q.Set("srt", "o"); q.Set("sp", "rz") },
		"bad srt":          func(q url.Values) { q.Set("ss", "t"); q.Set("srt", "x") },
		"bad ss":           func(q url.Values) { q.Set("ss", "tz"); q.Set("srt", "o") },
	} {
		qv, _ := url.ParseQuery(good)
		tamper(qv)
		_, err := v.Verify(request("GET", "http", "mytable()", qv.Encode()), "devstoreaccount1", keys)
		if name == "no expiry" {
			// The signature covers se, so its absence shows as a mismatch first.
			wantErr(t, err, ErrSignatureMismatch, CodeAuthenticationFailed)
			continue
		}
		if !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
	_, err := v.Verify(httptest.NewRequest("GET", "http://h/devstoreaccount1/t?%zz", nil), "devstoreaccount1", keys)
	wantErr(t, err, ErrMalformed, CodeAuthenticationFailed)
}

func TestParseSASTime(t *testing.T) {
	want := time.Date(2026, 11, 28, 19, 5, 0, 0, time.UTC)
	for _, s := range []string{"2026-11-28T19:05:00Z", "2026-11-28T19:05Z", "2026-11-28T19:05:00.0000000Z"} {
		if got, err := parseSASTime(s); err != nil || !got.Equal(want) {
			t.Errorf("%s: %v %v", s, got, err)
		}
	}
	if got, err := parseSASTime("2026-11-28"); err != nil || !got.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date only: %v %v", got, err)
	}
	if _, err := parseSASTime("28/11/2026"); err == nil {
		t.Error("accepted 28/11/2026")
	}
}

func TestEntityAction(t *testing.T) {
	for _, c := range []struct {
		method string
		header map[string][]string
		want   Action
	}{
		{"GET", nil, QueryEntities},
		{"POST", nil, InsertEntity},
		{"POST", map[string][]string{"X-HTTP-Method": {"MERGE"}}, UpsertEntity},
		{"POST", map[string][]string{"X-Http-Method": {"MERGE"}, "If-Match": {"*"}}, UpdateEntity},
		{"PUT", map[string][]string{"If-Match": {`W/"x"`}}, UpdateEntity},
		{"put", nil, UpsertEntity},
		{"PATCH", nil, UpsertEntity},
		{"MERGE", map[string][]string{"if-match": {"*"}}, UpdateEntity},
		{"DELETE", map[string][]string{"If-Match": {"*"}}, DeleteEntity},
		{"OPTIONS", nil, 0},
	} {
		if got := EntityAction(c.method, c.header); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.method, c.header, got, c.want)
		}
	}
}

func TestDecodeSigUnescapedPlus(t *testing.T) {
	sig := "4EkOseFrMbWI85jM+3Y3w6aQR0kxXDznZCBkfugtOs0="
	a, err1 := decodeSig(sig)
	b, err2 := decodeSig(strings.ReplaceAll(sig, "+", " "))
	if err1 != nil || err2 != nil || string(a) != string(b) {
		t.Errorf("%v %v", err1, err2)
	}
}
