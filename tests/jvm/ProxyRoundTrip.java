import java.io.FileReader;
import java.io.Reader;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What an unmodified kafka-clients application does against one bootstrap address:
 * create a topic (Admin), produce N records (acks=all, idempotent), consume them in a
 * consumer group and commit. Arguments: bootstrap, topic, group, N, and optionally a
 * properties file of client settings (security.protocol, ssl.*, sasl.*). Prints one JSON
 * object: the client's version, the brokers the Admin client was told about, the
 * values received and the offsets committed. Used by tests/test_gateway_proxy_clients.py;
 * prints facts only, judges nothing.
 */
public final class ProxyRoundTrip {
    private ProxyRoundTrip() { }

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        String group = args[2];
        int count = Integer.parseInt(args[3]);
        StringBuilder out = new StringBuilder("{");
        out.append(quote("version")).append(':').append(quote(version()));

        Properties common = new Properties();
        common.put("bootstrap.servers", bootstrap);
        common.put("client.id", "proxy-roundtrip-java");
        if (args.length > 4) {
            try (Reader settings = new FileReader(args[4])) {
                common.load(settings);
            }
        }
        List<String> brokers = new ArrayList<>();
        try (Admin admin = Admin.create(common)) {
            admin.createTopics(Collections.singleton(new NewTopic(topic, 3, (short) 1))).all().get();
            for (Node node : admin.describeCluster().nodes().get()) {
                brokers.add(node.host() + ":" + node.port());
            }
        }
        out.append(',').append(quote("brokers")).append(':').append(list(brokers));

        Properties producerProps = new Properties();
        producerProps.putAll(common);
        producerProps.put("acks", "all");
        producerProps.put("enable.idempotence", "true");
        producerProps.put("key.serializer", StringSerializer.class.getName());
        producerProps.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(producerProps)) {
            for (int i = 0; i < count; i++) {
                producer.send(new ProducerRecord<>(topic, "k" + i, "v" + i)).get();
            }
        }

        Properties consumerProps = new Properties();
        consumerProps.putAll(common);
        consumerProps.put("group.id", group);
        consumerProps.put("auto.offset.reset", "earliest");
        consumerProps.put("enable.auto.commit", "false");
        consumerProps.put("key.deserializer", StringDeserializer.class.getName());
        consumerProps.put("value.deserializer", StringDeserializer.class.getName());
        List<String> received = new ArrayList<>();
        long committed = 0;
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(consumerProps)) {
            consumer.subscribe(Collections.singleton(topic));
            long deadline = System.currentTimeMillis() + 90_000;
            while (received.size() < count && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    received.add(record.value());
                }
            }
            consumer.commitSync();
            Set<TopicPartition> partitions = new HashSet<>();
            for (int p = 0; p < 3; p++) {
                partitions.add(new TopicPartition(topic, p));
            }
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : consumer.committed(partitions).entrySet()) {
                if (e.getValue() != null) {
                    committed += e.getValue().offset();
                }
            }
        }
        out.append(',').append(quote("received")).append(':').append(list(received));
        out.append(',').append(quote("committed")).append(':').append(committed).append('}');
        System.out.println(out);
    }

    private static String version() throws Exception {
        Class<?> info = Class.forName("org.apache.kafka.common.utils.AppInfoParser");
        return (String) info.getMethod("getVersion").invoke(null);
    }

    private static String list(List<String> items) {
        StringBuilder b = new StringBuilder("[");
        for (int i = 0; i < items.size(); i++) {
            b.append(i == 0 ? "" : ",").append(quote(items.get(i)));
        }
        return b.append(']').toString();
    }

    private static String quote(String s) {
        return '"' + s.replace("\\", "\\\\").replace("\"", "\\\"") + '"';
    }
}
