"""The bus: NATS subjects, typed MessagePack wire messages, connection and JetStream topology.

Every subject lives in :mod:`bus.subjects`, every wire type in :mod:`bus.messages`, and the one codec in
:mod:`bus.codec`. Actors talk to NATS only through :class:`bus.client.Bus`.
"""
