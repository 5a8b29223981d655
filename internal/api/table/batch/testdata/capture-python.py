import sys, threading, json
from http.server import HTTPServer, BaseHTTPRequestHandler
from azure.data.tables import TableClient, UpdateMode
from azure.core.credentials import AzureNamedKeyCredential
out, style = sys.argv[1], sys.argv[2]
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get('Content-Length', 0)); body = self.rfile.read(n)
        open(out + '.body', 'wb').write(body)
        open(out + '.req', 'w').write(self.command + ' ' + self.path + '\n' + str(self.headers))
        msg = b'{"odata.error":{"code":"X","message":{"lang":"en-US","value":"capture"}}}'
        self.send_response(500); self.send_header('Content-Type','application/json'); self.send_header('Content-Length', str(len(msg))); self.end_headers(); self.wfile.write(msg)
    def log_message(self, *a): pass
srv = HTTPServer(('127.0.0.1', 0), H); port = srv.server_address[1]
threading.Thread(target=srv.serve_forever, daemon=True).start()
key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
if style == 'cosmos':
    ep, acct = 'http://localhost:%d' % port, 'localhost'
else:
    ep, acct = 'http://127.0.0.1:%d/devstoreaccount1' % port, 'devstoreaccount1'
c = TableClient(endpoint=ep, table_name='mytable', credential=AzureNamedKeyCredential(acct, key), retry_total=0)
try:
    c.submit_transaction([
        ('create', {'PartitionKey': 'p1', 'RowKey': 'r1', 'n': 1}),
        ('upsert', {'PartitionKey': 'p1', 'RowKey': 'r2', 's': "x'y"}, {'mode': UpdateMode.MERGE}),
        ('update', {'PartitionKey': 'p1', 'RowKey': 'r3', 's': 'z'}, {'mode': UpdateMode.REPLACE, 'etag': 'W/"datetime\'2024-01-01T00%3A00%3A00Z\'"', 'match_condition': __import__('azure.core', fromlist=['MatchConditions']).MatchConditions.IfNotModified}),
        ('delete', {'PartitionKey': 'p1', 'RowKey': 'r4'}),
        ('upsert', {'PartitionKey': 'p1', 'RowKey': 'r5', 'b': True}, {'mode': UpdateMode.REPLACE}),
    ])
except Exception as e:
    print('err:', type(e).__name__, str(e)[:200])
