import sys, threading, json
from http.server import HTTPServer, BaseHTTPRequestHandler
from azure.data.tables import TableClient, TableServiceClient
from azure.core.credentials import AzureNamedKeyCredential
out, style = sys.argv[1], sys.argv[2]
reqs = []
class H(BaseHTTPRequestHandler):
    def handle_one(self):
        n = int(self.headers.get('Content-Length', 0)); body = self.rfile.read(n)
        reqs.append({'method': self.command, 'target': self.path, 'headers': [[k, v] for k, v in self.headers.items()], 'body': body.decode()})
        msg = b'{"odata.error":{"code":"X","message":{"lang":"en-US","value":"capture"}}}'
        self.send_response(500); self.send_header('Content-Type','application/json'); self.send_header('Content-Length', str(len(msg))); self.end_headers(); self.wfile.write(msg)
    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = handle_one
    def log_message(self, *a): pass
srv = HTTPServer(('127.0.0.1', 0), H); port = srv.server_address[1]
threading.Thread(target=srv.serve_forever, daemon=True).start()
key = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
if style == 'cosmos':
    ep, acct = 'http://localhost:%d' % port, 'localhost'
else:
    ep, acct = 'http://127.0.0.1:%d/devstoreaccount1' % port, 'devstoreaccount1'
cred = AzureNamedKeyCredential(acct, key)
svc = TableServiceClient(endpoint=ep, credential=cred, retry_total=0)
t = TableClient(endpoint=ep, table_name='mytable', credential=cred, retry_total=0)
for f in [lambda: svc.create_table('mytable'),
          lambda: t.get_entity("p 1", "r'1/é"),
          lambda: t.get_table_access_policy(),
          lambda: list(t.query_entities("PartitionKey eq 'p'"))]:
    try: f()
    except Exception as e: pass
json.dump({'sdk': 'azure-data-tables 12.4.2', 'account': acct, 'key': key, 'requests': reqs}, open(out, 'w'), indent=1)
