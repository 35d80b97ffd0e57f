import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * An unmodified kafka-clients producer that stays connected: it sends one record to
 * the topic (so it holds a connection to the partition's leader), prints "ready
 * <version>", and closes only when its standard input ends. Arguments: bootstrap,
 * topic, client id. Used by tests/test_gateway_proxy_ground_truth.py.
 */
public final class ProxyHold {
    private ProxyHold() { }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("client.id", args[2]);
        props.put("acks", "all");
        props.put("key.serializer", StringSerializer.class.getName());
        props.put("value.serializer", StringSerializer.class.getName());
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props)) {
            producer.send(new ProducerRecord<>(args[1], "held", "held")).get();
            Class<?> info = Class.forName("org.apache.kafka.common.utils.AppInfoParser");
            System.out.println("ready " + info.getMethod("getVersion").invoke(null));
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (in.readLine() != null) {
                // hold the connections until the test closes our stdin
            }
        }
    }
}
