// Starts the parsec binary named by PARSEC_BIN on a free loopback port with
// in-memory storage, and returns its endpoint and a stop function.
import { spawn } from "node:child_process";

export const emulatorKey =
  "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw==";

export async function startServer(extraArgs = []) {
  const bin = process.env.PARSEC_BIN;
  if (!bin) throw new Error("PARSEC_BIN must name the parsec binary");
  const child = spawn(bin, ["serve", "--in-memory", "--listen", "127.0.0.1:0", ...extraArgs], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const endpoint = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("server did not start: " + stderr)), 10000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/on (https?:\/\/[^ ]+) /);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => reject(new Error(`server exited with ${code}: ${stderr}`)));
  });
  return {
    endpoint,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", resolve);
        child.kill("SIGTERM");
      }),
  };
}
