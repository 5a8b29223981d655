package gosdk

import (
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"
	"github.com/parsecdb/parsec/internal/auth"
	"github.com/parsecdb/parsec/internal/server"
)

// headerPolicy sets one request header on every request of a client, as an
// SDK layer (client-side encryption) does.
type headerPolicy struct{ name, value *string }

func (p headerPolicy) Do(req *policy.Request) (*http.Response, error) {
	if *p.value != "" {
		req.Raw().Header.Set(*p.name, *p.value)
	}
	return req.Next()
}

// substatusOf returns the x-ms-substatus of an SDK error.
func substatusOf(err error) string {
	var re *azcore.ResponseError
	if errors.As(err, &re) && re.RawResponse != nil {
		return re.RawResponse.Header.Get("x-ms-substatus")
	}
	return ""
}

// TestIntendedContainerRid checks that an item request naming a container
// rid that is no longer the container's (deleted and created again) is
// refused with 400/1024, and that the current rid is served. The SDKs
// refresh their container cache on that substatus: 1024 is
// SubStatusCodes.IncorrectContainerRidSubStatus, and client-side encryption
// sends x-ms-cosmos-intended-collection-rid with its writes
// (Microsoft.Azure.Cosmos.Encryption EncryptionContainer in
// Azure/azure-cosmos-dotnet-v3).
func TestIntendedContainerRid(t *testing.T) {
	s := startServer(t, server.Options{})
	name, value := "x-ms-cosmos-intended-collection-rid", ""
	c := newClient(t, s, auth.EmulatorKey, &azcosmos.ClientOptions{ClientOptions: policyOptions(headerPolicy{&name, &value})})
	cc := setup(t, c, "rid", "c", hashPK("/pk"), 400)
	r, err := cc.Read(ctx(), nil)
	must(t, err, "read container")
	old := r.ContainerProperties.ResourceID
	_, err = cc.Delete(ctx(), nil)
	must(t, err, "delete container")
	cc = setup(t, c, "rid", "c", hashPK("/pk"), 400)
	r, err = cc.Read(ctx(), nil)
	must(t, err, "read container")
	if r.ContainerProperties.ResourceID == old {
		t.Fatalf("the recreated container has the old rid %s", old)
	}
	pk := azcosmos.NewPartitionKeyString("p")

	value = old
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"1","pk":"p"}`), nil)
	wantStatus(t, err, http.StatusBadRequest, "a write to the old rid")
	if sub := substatusOf(err); sub != "1024" {
		t.Fatalf("a write to the old rid: substatus %q, want 1024", sub)
	}
	value = r.ContainerProperties.ResourceID
	_, err = cc.CreateItem(ctx(), pk, []byte(`{"id":"1","pk":"p"}`), nil)
	must(t, err, "a write to the current rid")
	_, err = cc.ReadItem(ctx(), pk, "1", nil)
	must(t, err, "a read with the current rid")
}
