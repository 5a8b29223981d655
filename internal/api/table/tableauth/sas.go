package tableauth

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// sasCommon is what service and account signatures share.
type sasCommon struct {
	version, protocol, start, expiry, ipRange, permissions string
	startT, expiryT                                        time.Time
	mac                                                    []byte
}

func parseCommon(q url.Values) (sasCommon, *Error) {
	for name, vs := range q {
		if len(vs) > 1 && sasParams[name] {
			return sasCommon{}, fail(ErrMalformed, "the signature field %s appears more than once", name)
		}
	}
	c := sasCommon{
		version:     q.Get("sv"),
		protocol:    q.Get("spr"),
		start:       q.Get("st"),
		expiry:      q.Get("se"),
		ipRange:     q.Get("sip"),
		permissions: q.Get("sp"),
	}
	if c.version == "" {
		return c, fail(ErrMalformed, "the signature has no version (sv)")
	}
	mac, err := decodeSig(q.Get("sig"))
	if err != nil {
		return c, fail(ErrMalformed, "the signature (sig) is not a base64 HMAC-SHA256")
	}
	c.mac = mac
	if c.start != "" {
		if c.startT, err = parseSASTime(c.start); err != nil {
			return c, fail(ErrMalformed, "cannot parse the start time (st) %q", truncate(c.start, 64))
		}
	}
	if c.expiry != "" {
		if c.expiryT, err = parseSASTime(c.expiry); err != nil {
			return c, fail(ErrMalformed, "cannot parse the expiry time (se) %q", truncate(c.expiry, 64))
		}
	}
	switch c.protocol {
	case "", "https", "https,http":
	default:
		return c, fail(ErrMalformed, "the signed protocol (spr) %q is not https or https,http", truncate(c.protocol, 32))
	}
	if c.ipRange != "" {
		if _, _, ok := parseIPRange(c.ipRange); !ok {
			return c, fail(ErrMalformed, "cannot parse the IP range (sip) %q", truncate(c.ipRange, 64))
		}
	}
	return c, nil
}

// sasParams are the query parameters a signature is made of; each may
// appear once.
var sasParams = map[string]bool{
	"sv": true, "ss": true, "srt": true, "sp": true, "st": true, "se": true, "sip": true, "spr": true,
	"sig": true, "tn": true, "spk": true, "srk": true, "epk": true, "erk": true, "si": true, "ses": true,
}

// checkUse checks the conditions of use that come after the signature:
// the time window, the protocol, the source address. The order follows
// Azurite's TableSASAuthenticator: time, IP, protocol.
func (c sasCommon) checkUse(r *http.Request, now time.Time) *Error {
	if c.expiryT.IsZero() {
		return fail(ErrMalformed, "the signature has no expiry time (se)")
	}
	if now.After(c.expiryT) {
		return fail(ErrExpired, "signed expiry time [%s] has passed; current time is [%s]", c.expiry, now.UTC().Format(time.RFC1123))
	}
	if !c.startT.IsZero() && now.Before(c.startT) {
		return fail(ErrNotYetValid, "signed start time [%s] is in the future; current time is [%s]", c.start, now.UTC().Format(time.RFC1123))
	}
	if c.ipRange != "" {
		lo, hi, _ := parseIPRange(c.ipRange)
		ip, ok := remoteIP(r)
		if !ok || ip.Compare(lo) < 0 || ip.Compare(hi) > 0 {
			return fail(ErrSourceIP, "source address %q is outside %s", r.RemoteAddr, c.ipRange)
		}
	}
	if c.protocol == "https" && r.TLS == nil {
		return fail(ErrProtocol, "the signature allows https only and the request came over http")
	}
	return nil
}

// parseSASTime reads the ISO 8601 UTC forms the service accepts for st
// and se: a date, a time to the minute, second or fraction of a second.
func parseSASTime(s string) (time.Time, error) {
	var err error
	for _, layout := range []string{"2006-01-02T15:04:05Z", time.RFC3339Nano, "2006-01-02T15:04Z", "2006-01-02"} {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}

// parseIPRange reads "a.b.c.d" or "a.b.c.d-e.f.g.h".
func parseIPRange(s string) (lo, hi netip.Addr, ok bool) {
	a, b, isRange := strings.Cut(s, "-")
	lo, err := netip.ParseAddr(a)
	if err != nil {
		return lo, hi, false
	}
	hi = lo
	if isRange {
		if hi, err = netip.ParseAddr(b); err != nil || hi.BitLen() != lo.BitLen() || hi.Less(lo) {
			return lo, hi, false
		}
	}
	return lo.Unmap(), hi.Unmap(), true
}

// remoteIP is the address the request came from (RemoteAddr: proxies'
// forwarding headers are not trusted).
func remoteIP(r *http.Request) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return ip, false
	}
	return ip.Unmap(), true
}

// Table permissions of a service SAS, in the order the service writes
// them (aztables SASPermissions.String).
const servicePermLetters = "raud"

// Account permissions of an account SAS (aztables AccountSASPermissions).
const accountPermLetters = "rwdlacupx"

func validLetters(s, allowed string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(allowed, s[i]) < 0 {
			return false
		}
	}
	return true
}

// verifyServiceSAS checks a table SAS. String to sign (version 2018-11-09
// and later; Azurite ITableSASSignatureValues.ts, aztables sas_service.go):
//
//	sp \n st \n se \n /table/<account>/<lower-case tn> \n si \n sip \n spr \n sv \n spk \n srk \n epk \n erk
func (v Verifier) verifyServiceSAS(r *http.Request, q url.Values, account string, keys []Key) (Grant, error) {
	c, err := parseCommon(q)
	if err != nil {
		return Grant{}, err
	}
	if q.Get("si") != "" {
		return Grant{}, fail(ErrStoredPolicy, "the signature names stored access policy %q", truncate(q.Get("si"), 64))
	}
	table := q.Get("tn")
	if table == "" {
		return Grant{}, fail(ErrMalformed, "the table signature has no table name (tn)")
	}
	if c.permissions == "" || !validLetters(c.permissions, servicePermLetters) {
		return Grant{}, fail(ErrMalformed, "the signed permissions (sp) %q are not a subset of %q", truncate(c.permissions, 16), servicePermLetters)
	}
	rng := KeyRange{StartPK: q.Get("spk"), StartRK: q.Get("srk"), EndPK: q.Get("epk"), EndRK: q.Get("erk")}
	if rng.StartRK != "" && rng.StartPK == "" || rng.EndRK != "" && rng.EndPK == "" {
		return Grant{}, fail(ErrMalformed, "a row key bound (srk, erk) needs its partition key bound (spk, epk)")
	}
	sts := strings.Join([]string{
		c.permissions, c.start, c.expiry,
		"/table/" + account + "/" + strings.ToLower(table),
		"", c.ipRange, c.protocol, c.version,
		rng.StartPK, rng.StartRK, rng.EndPK, rng.EndRK,
	}, "\n")
	k, ok := matchKey(keys, sts, c.mac)
	if !ok {
		return Grant{}, fail(ErrSignatureMismatch, "signature did not match; string to sign used was %q", sts)
	}
	if err := c.checkUse(r, v.now()); err != nil {
		return Grant{}, err
	}
	return Grant{
		Scheme: ServiceSAS, Key: k.Name, ReadOnly: k.ReadOnly,
		Permissions: c.permissions, Table: strings.ToLower(table), Range: rng, Expiry: c.expiryT,
	}, nil
}

// verifyAccountSAS checks an account SAS. String to sign (Azurite
// IAccountSASSignatureValues.ts, aztables sas_account.go), ending in a
// newline:
//
//	account \n sp \n ss \n srt \n st \n se \n sip \n spr \n sv \n
//
// and from version 2020-12-06 on, the encryption scope (ses) before that
// final newline.
func (v Verifier) verifyAccountSAS(r *http.Request, q url.Values, account string, keys []Key) (Grant, error) {
	c, err := parseCommon(q)
	if err != nil {
		return Grant{}, err
	}
	services, resourceTypes := q.Get("ss"), q.Get("srt")
	if services == "" || !validLetters(services, "bfqt") {
		return Grant{}, fail(ErrMalformed, "the signed services (ss) %q are not a subset of \"bfqt\"", truncate(services, 16))
	}
	if resourceTypes == "" || !validLetters(resourceTypes, "sco") {
		return Grant{}, fail(ErrMalformed, "the signed resource types (srt) %q are not a subset of \"sco\"", truncate(resourceTypes, 16))
	}
	if c.permissions == "" || !validLetters(c.permissions, accountPermLetters) {
		return Grant{}, fail(ErrMalformed, "the signed permissions (sp) %q are not a subset of %q", truncate(c.permissions, 16), accountPermLetters)
	}
	fields := []string{account, c.permissions, services, resourceTypes, c.start, c.expiry, c.ipRange, c.protocol, c.version}
	if c.version >= "2020-12-06" {
		fields = append(fields, q.Get("ses"))
	}
	sts := strings.Join(append(fields, ""), "\n")
	k, ok := matchKey(keys, sts, c.mac)
	if !ok {
		return Grant{}, fail(ErrSignatureMismatch, "signature did not match; string to sign used was %q", sts)
	}
	if err := c.checkUse(r, v.now()); err != nil {
		return Grant{}, err
	}
	if !strings.Contains(services, "t") {
		return Grant{}, fail(ErrService, "signed services %q", services)
	}
	return Grant{
		Scheme: AccountSAS, Key: k.Name, ReadOnly: k.ReadOnly,
		Permissions: c.permissions, ResourceTypes: resourceTypes, Expiry: c.expiryT,
	}, nil
}
