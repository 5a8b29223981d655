"""The Azure Table API through Python's azure-data-tables (Debian's
python3-azure, 12.4.x): tables, upserts, reads, filtered and paged
queries, transactions and deletes, in both URL styles. The SDK treats a
host-style http://localhost:PORT/ endpoint (port not 10002) as Cosmos DB
and a path-style http://127.0.0.1:PORT/devstoreaccount1 one as Storage
(azure/data/tables/_base_client.py, _common_conversion.py).

Run: PARSEC_BIN=bin/parsec /usr/bin/python3 test/python/tables_test.py
"""

import os
import re
import subprocess
import threading
import unittest
import warnings

from azure.core import MatchConditions
from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceNotFoundError
from azure.data.tables import (
    EdmType,
    EntityProperty,
    TableServiceClient,
    TableTransactionError,
    UpdateMode,
)

EMULATOR_KEY = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="


class Server:
    """parsec serve in memory with the Table API on a free loopback port."""

    def __init__(self):
        binary = os.environ.get("PARSEC_BIN")
        if not binary:
            raise unittest.SkipTest("PARSEC_BIN must name the parsec binary")
        self.proc = subprocess.Popen(
            [binary, "serve", "--in-memory", "--listen", "127.0.0.1:0", "--table-listen", "127.0.0.1:0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        found = {}

        def read():
            for line in self.proc.stdout:
                m = re.search(r"Table API on https?://[^:\s]+:(\d+)/", line)
                if m:
                    found["port"] = int(m.group(1))
                    return

        t = threading.Thread(target=read, daemon=True)
        t.start()
        t.join(15)
        if "port" not in found:
            self.stop()
            raise RuntimeError("parsec did not print the Table API's address")
        self.port = found["port"]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


server = None


def error_code(e):
    """The odata.error code of a failed call (this azure-core sets
    error_code only on some error classes)."""
    code = getattr(e, "error_code", None)
    if code:
        return code
    return e.response.json()["odata.error"]["code"]


def setUpModule():
    global server
    # The SDK's pooled connections outlive the tests that opened them.
    warnings.simplefilter("ignore", ResourceWarning)
    server = Server()


def tearDownModule():
    if server:
        server.stop()


class TablesBase:
    # Set by the subclasses: the connection string's account and endpoint.
    account = ""
    prefix = ""
    cosmos = None

    def endpoint(self):
        raise NotImplementedError

    def setUp(self):
        cs = (
            "DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;TableEndpoint=%s;"
            % (self.account, EMULATOR_KEY, self.endpoint())
        )
        self.svc = TableServiceClient.from_connection_string(cs, retry_total=0)
        # The style is what this suite claims it is (a private attribute,
        # but the only place the SDK records its decision).
        self.assertEqual(self.svc._cosmos_endpoint, self.cosmos)

    def table(self, name):
        return self.svc.create_table(self.prefix + name)

    def test_tables(self):
        names = [self.prefix + "tab%d" % i for i in range(5)]
        for n in names:
            self.svc.create_table(n)
        with self.assertRaises(ResourceExistsError):
            self.svc.create_table(names[0])
        flt = "TableName ge @lo and TableName lt @hi"
        params = {"lo": self.prefix + "tab", "hi": self.prefix + "tac"}
        pages = [list(p) for p in self.svc.query_tables(flt, parameters=params, results_per_page=2).by_page()]
        self.assertGreaterEqual(len(pages), 3)
        self.assertTrue(all(len(p) <= 2 for p in pages), [len(p) for p in pages])
        self.assertEqual(sorted(t.name for p in pages for t in p), names)
        self.svc.delete_table(names[4])
        left = sorted(t.name for t in self.svc.query_tables(flt, parameters=params))
        self.assertEqual(left, names[:4])

    def test_entities(self):
        t = self.table("ents")
        t.create_entity({"PartitionKey": "p", "RowKey": "r", "s": "one", "n": 1})
        with self.assertRaises(ResourceExistsError) as cm:
            t.create_entity({"PartitionKey": "p", "RowKey": "r"})
        self.assertEqual(error_code(cm.exception), "EntityAlreadyExists")
        e = t.get_entity("p", "r")
        self.assertEqual((e["s"], e["n"]), ("one", 1))
        etag = e.metadata["etag"]
        t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "m": True}, mode=UpdateMode.MERGE)
        e = t.get_entity("p", "r")
        self.assertEqual((e["s"], e["n"], e["m"]), ("one", 1, True))
        self.assertNotEqual(e.metadata["etag"], etag)
        # The old etag no longer matches.
        with self.assertRaises(HttpResponseError) as cm:
            t.update_entity(
                {"PartitionKey": "p", "RowKey": "r", "x": 1},
                mode=UpdateMode.REPLACE,
                etag=etag,
                match_condition=MatchConditions.IfNotModified,
            )
        self.assertEqual(cm.exception.status_code, 412)
        self.assertEqual(error_code(cm.exception), "UpdateConditionNotSatisfied")
        t.upsert_entity({"PartitionKey": "p", "RowKey": "r", "only": "this"}, mode=UpdateMode.REPLACE)
        e = t.get_entity("p", "r")
        self.assertEqual(set(e.keys()), {"PartitionKey", "RowKey", "only"})
        # Types: Int64 beyond 32 bits, whole Double, DateTime, Guid, bytes.
        big = EntityProperty(2**40 + 1, EdmType.INT64)
        t.create_entity(
            {
                "PartitionKey": "p",
                "RowKey": "types",
                "i64": big,
                "d": EntityProperty(4.0, EdmType.DOUBLE),
                "f": 2.5,
                "b": b"\x00\x01\xff",
                "g": EntityProperty("0f8fad5b-d9cb-469f-a165-70867728950e", EdmType.GUID),
            }
        )
        e = t.get_entity("p", "types")
        self.assertEqual(e["i64"].value if isinstance(e["i64"], EntityProperty) else e["i64"], 2**40 + 1)
        self.assertEqual(e["d"], 4.0)
        self.assertIsInstance(e["d"], float)
        self.assertEqual(e["f"], 2.5)
        self.assertEqual(bytes(e["b"]), b"\x00\x01\xff")
        self.assertEqual(str(e["g"]).lower(), "0f8fad5b-d9cb-469f-a165-70867728950e")
        t.delete_entity("p", "types")
        with self.assertRaises(ResourceNotFoundError):
            t.get_entity("p", "types")

    def test_query(self):
        t = self.table("query")
        for i in range(30):
            t.upsert_entity({"PartitionKey": "pk%d" % (i % 3), "RowKey": "r%02d" % i, "n": i, "odd": i % 2 == 1})
        got = []
        pages = t.query_entities("n ge @lo and odd eq @odd", parameters={"lo": 5, "odd": False}, select=["n"], results_per_page=4).by_page()
        for page in pages:
            page = list(page)
            self.assertLessEqual(len(page), 4)
            got.extend(e["n"] for e in page)
        self.assertEqual(sorted(got), [i for i in range(5, 30) if i % 2 == 0])
        one = [e["RowKey"] for e in t.query_entities("PartitionKey eq 'pk1' and RowKey ge 'r20'")]
        self.assertEqual(sorted(one), ["r22", "r25", "r28"])
        # Int32 2147483648.. go unsuffixed from this SDK and must be read as Int64.
        t.upsert_entity({"PartitionKey": "big", "RowKey": "b", "v": EntityProperty(3000000000, EdmType.INT64)})
        self.assertEqual([e["RowKey"] for e in t.query_entities("v eq @v", parameters={"v": 3000000000})], ["b"])
        with self.assertRaises(HttpResponseError) as cm:
            list(t.query_entities("n eq"))
        self.assertEqual(cm.exception.status_code, 400)

    def test_transaction(self):
        t = self.table("batch")
        t.create_entity({"PartitionKey": "b", "RowKey": "keep", "v": 1})
        t.create_entity({"PartitionKey": "b", "RowKey": "gone", "v": 1})
        result = t.submit_transaction(
            [
                ("create", {"PartitionKey": "b", "RowKey": "n1", "v": 1}),
                ("upsert", {"PartitionKey": "b", "RowKey": "n2", "v": 2}, {"mode": "replace"}),
                ("update", {"PartitionKey": "b", "RowKey": "keep", "w": 2}, {"mode": "merge"}),
                ("delete", {"PartitionKey": "b", "RowKey": "gone"}),
            ]
        )
        self.assertEqual(len(result), 4)
        rows = sorted(e["RowKey"] for e in t.query_entities("PartitionKey eq 'b'"))
        self.assertEqual(rows, ["keep", "n1", "n2"])
        keep = t.get_entity("b", "keep")
        self.assertEqual((keep["v"], keep["w"]), (1, 2))
        with self.assertRaises(TableTransactionError) as cm:
            t.submit_transaction(
                [
                    ("create", {"PartitionKey": "b", "RowKey": "x1"}),
                    ("create", {"PartitionKey": "b", "RowKey": "x2"}),
                    ("create", {"PartitionKey": "b", "RowKey": "n1"}),
                ]
            )
        self.assertEqual(cm.exception.status_code, 409)
        self.assertEqual(error_code(cm.exception), "EntityAlreadyExists")
        self.assertEqual(cm.exception.index, 2)
        rows = sorted(e["RowKey"] for e in t.query_entities("PartitionKey eq 'b'"))
        self.assertEqual(rows, ["keep", "n1", "n2"])


class HostStyle(TablesBase, unittest.TestCase):
    """localhost on a port other than 10002: the SDK speaks to Cosmos DB."""

    account = "localhost"
    prefix = "h"
    cosmos = True

    def endpoint(self):
        return "http://localhost:%d/" % server.port


class PathStyle(TablesBase, unittest.TestCase):
    """127.0.0.1/devstoreaccount1: the SDK speaks to Storage (Azurite's form)."""

    account = "devstoreaccount1"
    prefix = "p"
    cosmos = False

    def endpoint(self):
        return "http://127.0.0.1:%d/devstoreaccount1" % server.port


if __name__ == "__main__":
    unittest.main()
