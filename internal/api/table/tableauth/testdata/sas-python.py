# Prints SAS tokens made by azure-data-tables 12.4.2, as JSON.
import json
from datetime import datetime, timezone
from azure.core.credentials import AzureNamedKeyCredential
from azure.data.tables import generate_table_sas, generate_account_sas, TableSasPermissions, AccountSasPermissions, ResourceTypes
key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
cred = AzureNamedKeyCredential("devstoreaccount1", key)
start = datetime(2026, 11, 28, 18, 0, 0, tzinfo=timezone.utc)
expiry = datetime(2026, 11, 28, 20, 0, 0, tzinfo=timezone.utc)
out = {
  "table": generate_table_sas(cred, "MyTable", permission=TableSasPermissions(read=True, update=True), start=start, expiry=expiry),
  "tableRange": generate_table_sas(cred, "MyTable", permission=TableSasPermissions(read=True, update=True), start=start, expiry=expiry,
                                   start_pk="p1", start_rk="r5", end_pk="p3", end_rk="r2"),
  "tableIP": generate_table_sas(cred, "MyTable", permission=TableSasPermissions(read=True), expiry=expiry, ip_address_or_range="192.0.2.1-192.0.2.20", protocol="https,http"),
  "account": generate_account_sas(cred, resource_types=ResourceTypes(container=True, object=True), permission=AccountSasPermissions(read=True, list=True, add=True), expiry=expiry, start=start),
}
print(json.dumps({"sdk": "azure-data-tables 12.4.2", "start": "2026-11-28T18:00:00Z", "expiry": "2026-11-28T20:00:00Z", "tokens": out}, indent=1))
