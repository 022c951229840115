"""Deployment helpers: the role table and its NATS permissions (:mod:`rlar.deploy.auth`), NATS server
configurations for a cluster and a leaf site (:mod:`rlar.deploy.natsconf`), and network-namespace test
hosts (:mod:`rlar.deploy.netns`). ``python -m rlar.deploy`` regenerates the shipped files in deploy/."""
