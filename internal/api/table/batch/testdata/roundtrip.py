# Submits a transaction to the server at sys.argv[1] (a path-style endpoint)
# on table sys.argv[2] and prints what the SDK made of the batch response, as JSON.
import sys, json
from azure.data.tables import TableClient, TableTransactionError
from azure.core.credentials import AzureNamedKeyCredential
key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
t = TableClient(endpoint=sys.argv[1], table_name=sys.argv[2], credential=AzureNamedKeyCredential("devstoreaccount1", key), retry_total=0)
try:
    r = t.submit_transaction([
        ("create", {"PartitionKey": "p1", "RowKey": "r1"}),
        ("create", {"PartitionKey": "p1", "RowKey": "r2"}),
        ("delete", {"PartitionKey": "p1", "RowKey": "r3"}),
    ])
    print(json.dumps({"results": [{"etag": m.get("etag")} for m in r]}))
except TableTransactionError as e:
    print(json.dumps({"error": {"statusCode": e.status_code, "code": str(e.error_code.value if hasattr(e.error_code, "value") else e.error_code), "index": e.index, "message": e.message}}))
