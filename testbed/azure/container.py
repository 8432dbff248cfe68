"""What the real-Pulp test asks of the test bed's Azure Storage emulator, through azure-storage-blob as a
user's tools would.

  container.py create CONTAINER          make the container
  container.py list CONTAINER PREFIX     the blobs under PREFIX as JSON: [{"name", "bytes"}]

Env: AZURE_CONNECTION_STRING.
"""

import json
import os
import sys

from azure.storage.blob import BlobServiceClient


def main(command: str, container: str, *rest: str) -> None:
    service = BlobServiceClient.from_connection_string(os.environ["AZURE_CONNECTION_STRING"])
    if command == "create":
        service.create_container(container)
    elif command == "list":
        blobs = service.get_container_client(container).list_blobs(name_starts_with=rest[0])
        print(json.dumps([{"name": b.name, "bytes": b.size} for b in blobs]))
    else:
        sys.exit(f"container.py: unknown command {command}")


if __name__ == "__main__":
    main(*sys.argv[1:])
