// `language.md` §7.4: `E` of `reflection.call_agent` is inferred as `all` from the target, so the
// call performs `all`, which a narrower declared row does not allow.
agent dispatch(tool: agent never -> unknown with all) -> unknown with io {
  reflection.call_agent(target = tool, args = {})
}

agent main() -> null { null }
