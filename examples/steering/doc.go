// Package steering holds the manifests of the steering guide
// (site/steering.md), one directory per scenario: canary, blue-green,
// drain-node, drain-zone and drain-service. Its test renders each one for
// every consumer group and checks that every object is valid and that the
// endpoints carry the priorities and health the guide describes.
package steering
