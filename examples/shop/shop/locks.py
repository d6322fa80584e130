import redis

client = redis.Redis.from_url("redis://redis:6379/2")


def acquire(name: str, token: str) -> bool:
    lock_key = f"lock:{name}"
    return bool(client.setnx(lock_key, token))


def release(name: str) -> None:
    client.delete(f"lock:{name}")
