// Event Grid system topic on the storage account, and the BlobDeleted subscription that feeds the blob-events
// queue (read by the remove_deleted_blob function). The BlobCreated subscription to the blob trigger's webhook
// lives in blob-webhook.bicep: it can only be created once the function code runs (see main.bicep).
//
// Shared-key access to the account is off, so Event Grid writes to the queue with the topic's own managed
// identity, which gets Storage Queue Data Message Sender on the account.

param name string
param location string
param tags object = {}
param storageAccountName string
@description('Container whose blob events are delivered (DOCUMENTS_CONTAINER).')
param documentsContainer string
@description('Queue BlobDeleted events go to (BLOB_EVENTS_QUEUE).')
param blobEventsQueue string

var queueMessageSender = 'c6a89b2d-59bc-44d0-9896-0f6e12d7b80a' // Storage Queue Data Message Sender

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' = {
  name: name
  location: location
  tags: tags
  identity: {
    type: 'SystemAssigned'
  }
  properties: {
    source: storage.id
    topicType: 'Microsoft.Storage.StorageAccounts'
  }
}

resource topicSendsToQueue 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, topic.id, queueMessageSender)
  scope: storage
  properties: {
    principalId: topic.identity.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', queueMessageSender)
  }
}

resource deletedToQueue 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2022-06-15' = {
  parent: topic
  name: 'documents-deleted'
  dependsOn: [
    topicSendsToQueue
  ]
  properties: {
    eventDeliverySchema: 'EventGridSchema'
    filter: {
      includedEventTypes: [
        'Microsoft.Storage.BlobDeleted'
      ]
      subjectBeginsWith: '/blobServices/default/containers/${documentsContainer}/'
    }
    deliveryWithResourceIdentity: {
      identity: {
        type: 'SystemAssigned'
      }
      destination: {
        endpointType: 'StorageQueue'
        properties: {
          resourceId: storage.id
          queueName: blobEventsQueue
          // Never expire: a delete that waits in the queue must still be applied.
          queueMessageTimeToLiveInSeconds: -1
        }
      }
    }
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
  }
}

output name string = topic.name
