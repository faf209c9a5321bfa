"""Plays the browser for `katari mcp login` tests (katari runs it through $BROWSER).

It fetches the authorisation URL without following redirects and delivers the `Location` (the
loopback callback with the code) itself. KATARI_TEST_BROWSER selects how it behaves:
  approve (default)  deliver the redirect as it is
  wrong-state        deliver it with a different `state`
  deny               deliver `error=access_denied` instead, as a person refusing would cause
  closed             do nothing, as a browser that was closed
"""

import os
import sys
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def main() -> None:
    mode = os.environ.get("KATARI_TEST_BROWSER", "approve")
    if mode == "closed":
        return
    url = sys.argv[1]
    opener = urllib.request.build_opener(NoRedirect)
    try:
        response = opener.open(url, timeout=20)
        location = response.headers.get("Location")
    except urllib.error.HTTPError as e:
        location = e.headers.get("Location")
    if not location:
        sys.exit("browser: the authorization endpoint did not redirect")
    parts = urllib.parse.urlsplit(location)
    query = dict(urllib.parse.parse_qsl(parts.query))
    if mode == "wrong-state":
        query["state"] = "not-the-state-katari-sent"
    elif mode == "deny":
        query = {
            "error": "access_denied",
            "error_description": "The person refused access",
            "state": query.get("state", ""),
        }
    target = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
    try:
        urllib.request.urlopen(target, timeout=20).read()
    except urllib.error.HTTPError:
        pass  # A failure page is a normal outcome; katari reports the reason.


main()
