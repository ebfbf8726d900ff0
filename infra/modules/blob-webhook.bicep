// The BlobCreated subscription that calls the blob trigger's Event Grid webhook
// (https://<app>/runtime/webhooks/blobs?functionName=Host.Functions.ingest_document&code=<blobs_extension key>).
// Event Grid validates a webhook when the subscription is created, and the blobs_extension system key exists
// only once the Functions host has started with the code, so this is deployed after the code (second stage).
// The key is read inside the deployment and never leaves Azure Resource Manager.

param systemTopicName string
param functionAppName string
@description('Name of the blob-triggered function in function_app.py.')
param functionName string = 'ingest_document'
@description('Container the blob trigger watches (DOCUMENTS_CONTAINER).')
param documentsContainer string

resource site 'Microsoft.Web/sites@2024-04-01' existing = {
  name: functionAppName
}

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' existing = {
  name: systemTopicName
}

var blobsExtensionKey = listKeys('${site.id}/host/default', '2024-04-01').systemKeys.blobs_extension

resource createdToWebhook 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2022-06-15' = {
  parent: topic
  name: 'documents-created'
  properties: {
    eventDeliverySchema: 'EventGridSchema'
    filter: {
      includedEventTypes: [
        'Microsoft.Storage.BlobCreated'
      ]
      subjectBeginsWith: '/blobServices/default/containers/${documentsContainer}/'
    }
    destination: {
      endpointType: 'WebHook'
      properties: {
        endpointUrl: 'https://${site.properties.defaultHostName}/runtime/webhooks/blobs?functionName=Host.Functions.${functionName}&code=${blobsExtensionKey}'
        maxEventsPerBatch: 1
        preferredBatchSizeInKilobytes: 64
      }
    }
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
  }
}
