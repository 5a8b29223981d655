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

// TestInitialPartitionLayout checks the number of physical partitions of a
// new container: the service starts a container of T RU/s (manual, or the
// autoscale maximum) on ceil(T / 6,000) partitions
// (https://learn.microsoft.com/azure/cosmos-db/scaling-provisioned-throughput-best-practices),
// while a throughput change splits only past 10,000 RU/s per partition
// (--partition-max-rus).
func TestInitialPartitionLayout(t *testing.T) {
	s := startServer(t, server.Options{})
	c := newClient(t, s, auth.EmulatorKey, nil)
	setup(t, c, "layout", "probe", hashPK("/pk"), 400)
	d, err := c.NewDatabase("layout")
	must(t, err, "database client")
	f := func(id string, tp azcosmos.ThroughputProperties, want int) *azcosmos.ContainerClient {
		t.Helper()
		_, err := d.CreateContainer(ctx(), azcosmos.ContainerProperties{ID: id, PartitionKeyDefinition: hashPK("/pk")}, &azcosmos.CreateContainerOptions{ThroughputProperties: &tp})
		must(t, err, "create "+id)
		cc, _ := d.NewContainer(id)
		rs, err := cc.ReadFeedRanges(ctx(), nil)
		must(t, err, "feed ranges of "+id)
		if len(rs) != want {
			t.Fatalf("%s: %d ranges, want %d", id, len(rs), want)
		}
		return cc
	}
	f("m6000", azcosmos.NewManualThroughputProperties(6000), 1)
	m := f("m6100", azcosmos.NewManualThroughputProperties(6100), 2)
	f("m40000", azcosmos.NewManualThroughputProperties(40000), 7)
	f("a12000", azcosmos.NewAutoscaleThroughputProperties(12000), 2)
	// 2 partitions serve up to 20,000 RU/s: raising to it splits nothing.
	_, err = m.ReplaceThroughput(ctx(), azcosmos.NewManualThroughputProperties(20000), nil)
	must(t, err, "replace throughput")
	if rs, err := m.ReadFeedRanges(ctx(), nil); err != nil || len(rs) != 2 {
		t.Fatalf("20,000 RU/s on 2 partitions: %d ranges (%v), want 2", len(rs), err)
	}
}
