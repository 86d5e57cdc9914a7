/**
 * Test infrastructure for Locksmith: real {@code redis-server} processes ({@link io.locksmith.testkit.RedisServer},
 * {@link io.locksmith.testkit.RedisServerExtension}), real Redis topologies built from them (a Sentinel group,
 * {@link io.locksmith.testkit.RedisSentinelGroup}, and a Redis Cluster, {@link io.locksmith.testkit.RedisCluster}),
 * a fault-injecting TCP proxy ({@link io.locksmith.testkit.TcpProxy}) and process signals for freezing and crashing
 * processes ({@link io.locksmith.testkit.ProcessSignals}).
 */
package io.locksmith.testkit;
