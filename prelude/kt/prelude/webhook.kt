// The `webhook` module (`prelude.md` §13): inbound HTTP endpoints served by the loopback
// listener for the extent of a subscriber.

@"Serves a fresh, unguessable URL while `subscriber` runs; every POST of a JSON body to it calls `callback` and answers with its result. The subscriber's outcome is the result."
external agent inbound[R, effect E](
  @"Called once per delivery, with the posted body as its argument."
  callback: agent never -> unknown with E,
  @"Runs with the URL; the endpoint is released when it finishes."
  subscriber: agent (url: string) -> R with E,
) -> R with E from "webhook"
