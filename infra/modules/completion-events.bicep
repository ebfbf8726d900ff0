// Completion events (docs/events.md): an Event Grid namespace with one topic whose input schema is CloudEvents 1.0.
// The function app publishes "Chunking.Document.Indexed|Failed|Deleted" to it with its managed identity (role
// EventGrid Data Sender on the namespace; chunking/messages/events.py); applications subscribe to the topic:
// pull delivery (EventGridConsumerClient) or push to a webhook, Event Hubs, a queue.

param name string
param location string
param tags object = {}
@description('The namespace topic the app publishes to (COMPLETION_EVENTS_TOPIC).')
param topicName string
@description('Principal ID of the function app identity (it publishes).')
param functionPrincipalId string
@description('Days an event is kept for pull subscribers (1 to 7).')
@minValue(1)
@maxValue(7)
param retentionInDays int = 1
@description('Refuse the public network: publishing and pulling only through a private endpoint (usePrivateNetworking).')
param privateAccessOnly bool = false

var eventGridDataSender = 'd5a91429-5739-47e2-a06b-3470a27159e7' // EventGrid Data Sender

resource namespace 'Microsoft.EventGrid/namespaces@2025-02-15' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: 'Standard'
    capacity: 1
  }
  properties: {
    publicNetworkAccess: privateAccessOnly ? 'Disabled' : 'Enabled'
    isZoneRedundant: true
  }
}

resource topic 'Microsoft.EventGrid/namespaces/topics@2025-02-15' = {
  parent: namespace
  name: topicName
  properties: {
    inputSchema: 'CloudEventSchemaV1_0'
    publisherType: 'Custom'
    eventRetentionInDays: retentionInDays
  }
}

// A pull subscription, so an application can read the events without a webhook of its own (docs/events.md).
resource appSubscription 'Microsoft.EventGrid/namespaces/topics/eventSubscriptions@2025-02-15' = {
  parent: topic
  name: 'applications'
  properties: {
    deliveryConfiguration: {
      deliveryMode: 'Queue'
      queue: {
        receiveLockDurationInSeconds: 60
        maxDeliveryCount: 10
        eventTimeToLive: 'P1D'
      }
    }
    eventDeliverySchema: 'CloudEventSchemaV1_0'
  }
}

resource functionSendsEvents 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(namespace.id, functionPrincipalId, eventGridDataSender)
  scope: namespace
  properties: {
    principalId: functionPrincipalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', eventGridDataSender)
  }
}

output id string = namespace.id
output name string = namespace.name
// COMPLETION_EVENTS_ENDPOINT: the namespace's HTTP endpoint.
output endpoint string = 'https://${namespace.properties.topicsConfiguration.hostname}'
output topicName string = topic.name
