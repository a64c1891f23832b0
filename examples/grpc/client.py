"""A Python gRPC client (grpcio) of the example's Greeter: stubs made from greeter.proto with
grpc_tools.protoc (run.ts makes them next to this file in a temporary directory).

    python3 client.py 127.0.0.1:PORT
"""
import sys

import grpc

import greeter_pb2 as pb
import greeter_pb2_grpc as rpc

address = sys.argv[1]
with grpc.insecure_channel(address) as channel:
    stub = rpc.GreeterStub(channel)
    reply = stub.sayHello(pb.HelloRequest(name="python"), timeout=5)
    print(f"python: sayHello -> {reply.message}")
    counted = [count.value for count in stub.countTo(pb.CountRequest(n=3), timeout=5)]
    print(f"python: countTo(3) -> {', '.join(map(str, counted))}")
    try:
        stub.sayHello(pb.HelloRequest(name=""), timeout=5)
    except grpc.RpcError as error:
        print(f"python: sayHello('') -> {error.code().name}: {error.details()}")
