"""The client command of the MCP conformance suite's OAuth scenarios (`conformance client
--command "PYTHON conformance_client.py" --suite auth`; the runner appends the server URL).

Each scenario gets a KATARI_HOME of its own (scenarios run in parallel). It logs in with
`katari mcp login --url URL --name c`, $BROWSER playing the browser (browser.py), passing a
pre-registered client from MCP_CONFORMANCE_CONTEXT when the scenario gives one; then, when
KATARI_CONFORMANCE_SCRIPT names a script, calls the server's `test-tool` through
`mcp.oauth(name = "c")` with `katari run`, and records the exit statuses in
KATARI_HOME/outcome.json.

Environment: KATARI_BIN (the binary), KATARI_CONFORMANCE_HOMES (where the homes go), BROWSER.
"""

import json
import os
import subprocess
import sys
import tempfile


def main() -> int:
    url = sys.argv[-1]
    katari = os.environ["KATARI_BIN"]
    env = dict(os.environ)
    env["KATARI_HOME"] = tempfile.mkdtemp(
        prefix="home-", dir=os.environ.get("KATARI_CONFORMANCE_HOMES")
    )
    login = [katari, "mcp", "login", "--url", url, "--name", "c", "--timeout", "20"]
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("client_id"):
        login += ["--client-id", context["client_id"]]
        if context.get("client_secret"):
            env["KATARI_CONFORMANCE_SECRET"] = context["client_secret"]
            login += ["--client-secret-env", "KATARI_CONFORMANCE_SECRET"]
    outcome = {"scenario": os.environ.get("MCP_CONFORMANCE_SCENARIO", "")}
    done = subprocess.run(login, env=env)
    outcome["login"] = done.returncode
    script = os.environ.get("KATARI_CONFORMANCE_SCRIPT")
    if done.returncode == 0 and script:
        run = [katari, "run", script, "-a", f"url={url}", "-a", "tool=test-tool", "-a", "cred=c"]
        ran = subprocess.run(run, env=env, capture_output=True, text=True)
        outcome["run"] = ran.returncode
        outcome["stdout"] = ran.stdout
        sys.stderr.write(ran.stderr)
    # What happened, for the test to check (the runner itself ignores exit statuses in suites).
    with open(os.path.join(env["KATARI_HOME"], "outcome.json"), "w") as f:
        json.dump(outcome, f)
    return outcome.get("run", 0) or outcome["login"]


sys.exit(main())
