"""The Python SDK side of bench/mcp_client.py: N sequential `echo` calls over one session, after
one warm-up call. Usage: python mcp_client_py.py URL N. Prints "<n> <milliseconds>"."""

import asyncio
import sys
import time

from mcp import Client


async def main(url: str, n: int) -> None:
    async with Client(url, mode="legacy") as client:
        await client.call_tool("echo", {"message": "hi"})
        start = time.perf_counter()
        for _ in range(n):
            await client.call_tool("echo", {"message": "hi"})
        elapsed = (time.perf_counter() - start) * 1000
    print(f"{n} {elapsed:.1f}")


asyncio.run(main(sys.argv[1], int(sys.argv[2])))
